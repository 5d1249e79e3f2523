"""How long each part's reference notebook takes to run from top to bottom, as a student's kernel runs it: one
thread, the notebooks' data cache warmed first (its one-off encoder training is not counted). Target: 120 s each,
so that a student can rerun a notebook while working on it.

    python benchmarks/notebook_benchmark.py [--part MODULE ...]

Runs copies of solutions/ and assignments/ in a temporary folder (nothing is written into the repository), on a
kernel of this interpreter. Prints one line per notebook: wall seconds, errors, and whether it met the target.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.parts import MODULES  # noqa: E402 (after the path insert: run as a script)
from tests.kernels import kernel_spec, notebook_env, run_notebook, warm_data_cache  # noqa: E402

TARGET_SECONDS = 120
KERNEL = "captionkit-notebook-benchmark"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", action="append", choices=MODULES, help="a part (default: all seven)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="captionkit-notebooks-") as tmp:
        work = Path(tmp)
        for folder in ("assignments", "solutions"):
            shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__", ".*", "*.pyc"))
        specs = kernel_spec(work / "kernels", KERNEL)
        env = notebook_env(work)
        warm_data_cache(env, work)
        over = 0
        for part in args.part or MODULES:
            path = work / "solutions" / f"{part}.ipynb"
            nb = nbformat.read(path, as_version=4)
            started = time.perf_counter()
            run_notebook(nb, folder=path.parent, specs=specs, kernel_name=KERNEL, env=env, timeout=600)
            seconds = time.perf_counter() - started
            errors = sum(o.output_type == "error" for cell in nb.cells if cell.cell_type == "code"
                         for o in cell.outputs)
            over += seconds > TARGET_SECONDS
            print(f"solutions/{part}.ipynb  {seconds:6.1f} s  errors {errors}  "
                  f"{'over' if seconds > TARGET_SECONDS else 'within'} the {TARGET_SECONDS} s target", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
