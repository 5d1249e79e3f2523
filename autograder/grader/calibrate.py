"""Measure the reference's trained scores on the hidden data over several training seeds, the spread every
training threshold is chosen from (docs/thresholds.md records the table).

    python -m autograder.grader.calibrate [--seeds 5] [--part MODULE ...]

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
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--part", action="append", choices=sorted(SPECS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-calibrate-")))
    print(f"hidden data seed {ctx.seed}; training seeds {ctx.seed} .. {ctx.seed + args.seeds - 1}; one thread\n")
    print("| part | " + " | ".join(f"seed +{i}" for i in range(args.seeds)) + " | min | mean | threshold | CPU s per run |")
    print("|---" * (args.seeds + 5) + "|")
    for part in args.part or SPECS:
        spec = SPECS[part]
        scores, t0 = [], time.process_time()
        for i in range(args.seeds):
            scores.append(spec.calibrate(ctx, ctx.seed + i))
        per_run = (time.process_time() - t0) / args.seeds
        print(f"| {part} | " + " | ".join(f"{s:.3f}" for s in scores) +
              f" | {min(scores):.3f} | {statistics.mean(scores):.3f} | {spec.threshold} | {per_run:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
