"""How long each part's reference notebook takes to run from top to bottom, as a student's kernel runs it (no thread
count in its environment: shared.notebook.setup sets torch to one thread), the notebooks' data cache warmed first
(its one-off encoder training is not counted). Targets: 60 s each on an idle two-core machine, 90 s with the kernel held to one core (--one-core, as
`taskset -c 0`), so that a student can rerun a notebook while working on it.

    python benchmarks/notebook_benchmark.py [--part MODULE ...] [--one-core]

Runs copies of solutions/ and assignments/ in a temporary folder (nothing is written into the repository), on a
kernel of this interpreter. Prints one line per notebook: wall seconds, the kernel's CPU seconds (user + system;
other load on the machine inflates the wall time much more than these), the load average while it ran, errors, and
whether the wall time met the target. On a loaded machine compare the CPU seconds with the target.
"""

from __future__ import annotations

import argparse
import os
import resource
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

TARGET_SECONDS = {"two cores": 60, "one core": 90}
KERNEL = "captionkit-notebook-benchmark"


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's ended children (a notebook's kernel, once shut down)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_part(part: str, work: Path, specs: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, kernel CPU seconds, error outputs) of the reference notebook of `part`."""
    path = work / "solutions" / f"{part}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cpu, started = children_cpu_seconds(), time.perf_counter()
    run_notebook(nb, folder=path.parent, specs=specs, kernel_name=KERNEL, env=env, timeout=600)
    wall, cpu = time.perf_counter() - started, children_cpu_seconds() - cpu
    errors = sum(o.output_type == "error" for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs)
    return wall, cpu, errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", action="append", choices=MODULES, help="a part (default: all seven)")
    parser.add_argument(
        "--one-core",
        action="store_true",
        help="hold this process and the kernels it starts to the first core it may use",
    )
    args = parser.parse_args(argv)
    mode = "one core" if args.one_core else "two cores"
    if args.one_core:  # as `taskset -c 0`: the kernel inherits the affinity
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    target = TARGET_SECONDS[mode]
    with tempfile.TemporaryDirectory(prefix="captionkit-notebooks-") as tmp:
        work = Path(tmp)
        for folder in ("assignments", "solutions"):
            shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__", ".*", "*.pyc"))
        specs = kernel_spec(work / "kernels", KERNEL)
        env = notebook_env(work)
        warm_data_cache(env, work)  # one thread, as the kernel's shared.notebook.setup sets it (the cache's key)
        if not args.one_core:  # a student's kernel, whose environment sets no thread count
            env = {k: v for k, v in env.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        over = 0
        print(
            f"{mode} ({len(os.sched_getaffinity(0))} usable of {os.cpu_count()}), target {target} s wall per notebook"
        )
        for part in args.part or MODULES:
            load = os.getloadavg()[0]
            wall, cpu, errors = run_part(part, work, specs, env)
            over += wall > target or errors > 0
            print(
                f"solutions/{part + '.ipynb':20s} wall {wall:6.1f} s  CPU {cpu:6.1f} s  load before "
                f"{load:4.2f} after {os.getloadavg()[0]:4.2f}  errors {errors}  "
                f"{'over' if wall > target else 'within'} the {target} s target",
                flush=True,
            )
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
