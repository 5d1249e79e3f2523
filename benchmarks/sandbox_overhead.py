"""What the sandbox costs: the median time of one recipe call through a sandboxed worker against the same
call in-process, and one full grade of the reference sandboxed against in-process (CPU seconds, wall
seconds and peak memory of the whole process tree), measured in one run.

    python benchmarks/sandbox_overhead.py [--calls 300] [--part PART ...]
"""

from __future__ import annotations

import argparse
import os  # noqa: F401
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from grade_benchmark import measure  # noqa: E402
from inprocess_worker import InProcessWorker  # noqa: E402

from autograder.grader.isolation import detect  # noqa: E402
from autograder.public.client import Worker, copy_runtime  # noqa: E402
from autograder.worker.toys import toy_table  # noqa: E402


def call_times(worker, calls: int) -> list[float]:
    table, contexts = toy_table(0, 2, 3, 5), torch.arange(2)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        worker.call("decoding.greedy_toy", table=table, contexts=contexts, max_len=3)
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--part", action="append", help="grade only these parts (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    isolation = detect()
    print(isolation.note)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o711)  # the sandbox user passes through to its runtime and staging folders
        sandboxed = Worker("decoding", ROOT / "solutions", tmp / "sandboxed", copy_runtime(tmp / "runtime"), isolation)
        t0 = time.perf_counter()
        sandboxed.restart()
        start_up = time.perf_counter() - t0
        inside = InProcessWorker("decoding", ROOT / "solutions", tmp / "inside")
        sandbox_times, inside_times = call_times(sandboxed, args.calls), call_times(inside, args.calls)
        sandboxed.close()
    med_s, med_i = statistics.median(sandbox_times), statistics.median(inside_times)
    print(f"\none recipe call (decoding.greedy_toy, {args.calls} calls):")
    print(
        f"  sandboxed median {med_s * 1e3:.2f} ms, in-process median {med_i * 1e3:.2f} ms, "
        f"overhead {1e3 * (med_s - med_i):.2f} ms per call"
    )
    print(f"  worker start-up (a fresh sandboxed worker, imports torch): {start_up:.2f} s")

    parts = [a for p in (args.part or []) for a in ("--part", p)]
    sandboxed_grade = [sys.executable, "-m", "autograder", "grade", str(ROOT / "solutions"), *parts]
    in_process_grade = [
        sys.executable,
        str(ROOT / "benchmarks" / "inprocess_worker.py"),
        str(ROOT / "solutions"),
        *parts,
    ]
    rows = {"sandboxed": measure(sandboxed_grade), "in-process": measure(in_process_grade)}
    print(
        f"\n{'full grade of the reference':28s} {'CPU s':>8s} {'wall s':>8s} {'peak PSS MB':>12s} {'peak RSS MB':>12s}"
    )
    for name, r in rows.items():
        print(
            f"{name:28s} {r['cpu_seconds']:8.1f} {r['wall_seconds']:8.1f} {r['peak_tree_pss_mb']:12.0f} "
            f"{r['peak_tree_rss_mb']:12.0f}"
        )
    s, i = rows["sandboxed"], rows["in-process"]
    print(
        f"ratio sandboxed / in-process: wall {s['wall_seconds'] / i['wall_seconds']:.2f}x, "
        f"CPU {s['cpu_seconds'] / i['cpu_seconds']:.2f}x (target: at most 1.2x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
