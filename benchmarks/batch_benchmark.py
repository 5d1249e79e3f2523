"""Benchmark batch grading: submissions per CPU-minute, and the speed-up of `--jobs 2` over `--jobs 1`.

    python benchmarks/batch_benchmark.py [--submissions 4] [--jobs 1 2] [--part MODULE ...] [--local-cluster]
                                         [--baseline REF]

The class alternates the reference solutions and the bundled sample submission (autograder/grader/sample.py), each
holding the modules of --part (default: all seven). Every configuration grades the same class into a fresh
folder, measured as a whole process tree by grade_benchmark.measure (CPU seconds of the command and all its
descendants, wall seconds, peak PSS). --local-cluster adds `--jobs N` on a dask.distributed LocalCluster of N
single-threaded worker processes (the extra `.[cluster]`), the alternative to the process pool that `batch`
uses without --scheduler. On a machine shared with other work the figures stretch: the command prints the
load average beside them. --baseline REF grades the same class with a worktree of REF too, each configuration in
both trees one after the other, and prints this tree's CPU seconds per submission against REF's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from baseline import environment, worktree  # noqa: E402
from grade_benchmark import measure  # noqa: E402

from autograder.grader import sample  # noqa: E402
from shared.parts import MODULES  # noqa: E402

LOCAL_CLUSTER = """
import sys
from pathlib import Path
from distributed import LocalCluster
from autograder.grader import batch
with LocalCluster(n_workers=int(sys.argv[3]), threads_per_worker=1, processes=True, dashboard_address=None) as c:
    batch.run(Path(sys.argv[1]), Path(sys.argv[2]), scheduler=c.scheduler_address)
"""


def make_class(root: Path, n: int, parts: list[str]) -> Path:
    """n submissions alternating the reference and the sample, with the modules of `parts` only."""
    sample_folder = sample.build(root / "_sample")
    for i in range(n):
        source = ROOT / "solutions" if i % 2 == 0 else sample_folder
        folder = root / "class" / f"student_{i:03d}"
        folder.mkdir(parents=True)
        for part in parts:
            if (source / f"{part}.py").exists():
                shutil.copyfile(source / f"{part}.py", folder / f"{part}.py")
    return root / "class"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=4)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--part", action="append", choices=MODULES, help="modules each submission holds (all)")
    parser.add_argument("--local-cluster", action="store_true", help="also grade on a dask LocalCluster")
    parser.add_argument(
        "--baseline", help="also grade the class with this commit's kit (a worktree), per configuration"
    )
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="captionkit-batch-benchmark-") as tmp, contextlib.ExitStack() as stack:
        trees = {"this tree": ROOT}
        if args.baseline:
            trees[args.baseline] = stack.enter_context(worktree(args.baseline))
        klass = make_class(Path(tmp), args.submissions, args.part or list(MODULES))
        configurations = [
            (
                f"--jobs {j} (process pool)" if j > 1 else "--jobs 1 (inline)",
                [sys.executable, "-m", "autograder", "batch", str(klass), "--out", "{out}", "--jobs", str(j)],
            )
            for j in args.jobs
        ]
        if args.local_cluster:
            configurations += [
                (f"--jobs {j} (dask LocalCluster)", [sys.executable, "-c", LOCAL_CLUSTER, str(klass), "{out}", str(j)])
                for j in args.jobs
                if j > 1
            ]
        for i, (name, command) in enumerate(configurations):
            for tree_name, tree in trees.items():
                load = os.getloadavg()[0]
                out = Path(tmp) / f"out-{i}-{len(rows)}"
                result = measure([c.replace("{out}", str(out)) for c in command], tree, environment())
                if result["returncode"] != 0:
                    print(result["output"][-3000:])
                    return 1
                rows.append((name, tree_name, result, load))
    print(f"\n{args.submissions} submissions ({', '.join(args.part or ['all parts'])}), on {os.cpu_count()} cores")
    print(
        f"{'configuration':34s} {'tree':>10s} {'CPU s':>7s} {'wall s':>7s} {'subm./CPU-min':>14s} {'speed-up':>9s} "
        f"{'peak PSS MB':>12s} {'load before':>12s}"
    )
    base = next((r["wall_seconds"] for name, _, r, _ in rows if name.startswith("--jobs 1 ")), None)
    for name, tree_name, r, load in rows:
        per_minute = args.submissions / (r["cpu_seconds"] / 60)
        speed_up = f"{base / r['wall_seconds']:.2f}x" if base else "-"
        print(
            f"{name:34s} {tree_name[:10]:>10s} {r['cpu_seconds']:7.1f} {r['wall_seconds']:7.1f} {per_minute:14.2f} "
            f"{speed_up:>9s} {r['peak_tree_pss_mb']:12.0f} {load:12.2f}"
        )
    if args.baseline:
        for name, _ in configurations:
            cpu = {t: r["cpu_seconds"] / args.submissions for n, t, r, _ in rows if n == name}
            print(
                f"{name}: {cpu['this tree']:.1f} CPU s per submission against {cpu[args.baseline]:.1f} at "
                f"{args.baseline} ({cpu['this tree'] / cpu[args.baseline]:.2f}x; target <= 0.7)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
