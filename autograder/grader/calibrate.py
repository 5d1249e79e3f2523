"""Measure the reference's trained scores on the hidden data over several training seeds, the spread every
training threshold is chosen from (docs/thresholds.md records the table).

    python -m autograder.grader.calibrate [--seeds 5] [--first 0] [--threads 1] [--part MODULE ...]

Training seeds are the hidden seed + FIRST .. + FIRST + SEEDS - 1 (two processes can share a long calibration:
`--first 0 --seeds 10` and `--first 10 --seeds 10`). Graded runs use one thread (the worker's setting); other
thread counts change the order of floating-point sums, so the spread is measured at each count students and
machines may use.

Each part with a training check has its spec in autograder/grader/training.py (SPECS): the reference's run, its
score and the threshold.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from autograder.grader.context import GradingContext
from autograder.grader.training import SPECS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.grader.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5, help="how many training seeds (default 5)")
    parser.add_argument("--first", type=int, default=0, help="offset of the first training seed (default 0)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as graded)")
    parser.add_argument("--part", action="append", choices=sorted(SPECS))
    args = parser.parse_args(argv)
    for name in ("seeds", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: expected a positive number, got {getattr(args, name)}")
    if args.first < 0:
        parser.error(f"--first: expected 0 or more, got {args.first}")
    torch.set_num_threads(1)
    ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-calibrate-")))
    ctx.data   # the hidden data as a grade loads it (one thread: the encoder's outputs depend on the thread count)
    torch.set_num_threads(args.threads)   # the training runs' thread count
    offsets = range(args.first, args.first + args.seeds)
    print(f"hidden data seed {ctx.seed}; training seeds +{offsets[0]} .. +{offsets[-1]}; "
          f"{args.threads} thread{'s' if args.threads > 1 else ''}\n")
    print("| part | " + " | ".join(f"seed +{i}" for i in offsets) +
          " | min | mean | sd | threshold | CPU s per run |")
    print("|---" * (args.seeds + 6) + "|")
    failures = []
    for part in args.part or SPECS:
        spec = SPECS[part]
        scores, failed, t0 = [], [], time.process_time()
        for i in offsets:
            score, verdict = spec.calibrate(ctx, ctx.seed + i)
            scores.append(score)
            if verdict is not None:
                failed.append(f"+{i}: {verdict}")
        per_run = (time.process_time() - t0) / args.seeds
        sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
        print(f"| {part} | " + " | ".join(f"{s:.3f}" for s in scores) +
              f" | {min(scores):.3f} | {statistics.mean(scores):.3f} | {sd:.3f} | {spec.threshold} | {per_run:.1f} |",
              flush=True)
        failures.extend(f"{part} seed {line}" for line in failed)
    print("\nthe checks' verdicts on the reference: " + ("pass on every seed" if not failures else
                                                          "FAIL on " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
