"""How long a student waits for `check`: wall seconds of the public checks, this tree beside another commit's, in one run.

    python benchmarks/check_benchmark.py [--baseline REF] [--runs N] [--no-train]

Each case is one command a student types, run N times (default 3) in this tree and in a worktree of REF (default
`main`), alternating, on the reference modules (solutions/) and on the stubs (assignments/): every part, and one part
(show_and_tell, the part whose public checks take longest). Printed per case: the median wall seconds of each tree
(with the range), their ratio, and the CPU seconds of the command's process tree that the kernel reports to the
benchmark (RUSAGE_CHILDREN: processes whose exit was collected, which `check`'s workers are). Then, once in each tree
(unless --no-train), `check --train` of every trained part with the handout's checker. Targets: every part in at most
6 s, one part in at most 2.5 s, `check --train` in at most 60 s, on an idle 2-core machine; the benchmark prints the
load average first, since a busy machine moves every figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from baseline import worktree  # noqa: E402

CASES = (
    ("reference, every part", ("-m", "autograder", "check", "solutions")),
    ("reference, one part", ("-m", "autograder", "check", "solutions", "--part", "show_and_tell")),
    ("stubs, every part", ("-m", "autograder", "check", "assignments")),
    ("stubs, one part", ("-m", "autograder", "check", "assignments", "--part", "show_and_tell")),
    ("handout checker, reference, every part", ("-m", "autograder.public", "check", "solutions")),
)
TRAIN = ("training runs, every trained part", ("-m", "autograder.public", "check", "--train", "solutions"))
TARGETS = {"every part": 6.0, "one part": 2.5, "every trained part": 60.0}


def timed(tree: Path, arguments: tuple[str, ...]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the finished process tree) of `python ARGUMENTS` run in `tree`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, *arguments], cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def target_of(case: str) -> float | None:
    return next((seconds for kind, seconds in TARGETS.items() if case.endswith(kind)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="main", help="the commit to compare with (default: main)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each case in each tree (default 3)")
    parser.add_argument("--no-train", action="store_true", help="leave out `check --train` (about a minute a tree)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs: expected at least 1, got {args.runs}")
    print(f"load average: {os.getloadavg()[0]:.2f} (1 min); {os.cpu_count()} CPUs; {args.runs} runs of each")
    with worktree(args.baseline) as baseline:
        trees = {"this tree": ROOT, args.baseline: baseline}
        for tree in trees.values():  # a first run of each: Python's caches of the compiled modules
            timed(tree, CASES[1][1])
        print(f"{'case':40s} {'this tree':>18s} {args.baseline:>18s} {'ratio':>6s} {'CPU s (this, base)':>20s}")
        for case, arguments in [*CASES, *([] if args.no_train else [TRAIN])]:
            runs = {name: [] for name in trees}
            for _ in range(1 if arguments == TRAIN[1] else args.runs):
                for name, tree in trees.items():
                    runs[name].append(timed(tree, arguments))
            walls = {name: [wall for wall, _ in got] for name, got in runs.items()}
            cpus = {name: statistics.median(cpu for _, cpu in got) for name, got in runs.items()}
            ours, theirs = (statistics.median(walls[name]) for name in trees)
            cells = [f"{statistics.median(w):6.2f} ({min(w):.2f}-{max(w):.2f})" for w in walls.values()]
            target = target_of(case)
            verdict = "" if target is None else f"  target {target:g} s: {'met' if ours <= target else 'MISSED'}"
            print(
                f"{case:40s} {cells[0]:>18s} {cells[1]:>18s} {ours / theirs:6.2f} "
                f"{cpus['this tree']:9.1f} {cpus[args.baseline]:9.1f}{verdict}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
