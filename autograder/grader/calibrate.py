"""Measure the reference's trained scores on the hidden data over several training seeds, the spread every
training threshold is chosen from (docs/thresholds.md records the table).

    python -m autograder.grader.calibrate [--seeds 5] [--first 0] [--threads 1] [--part MODULE ...]

Training seeds are the hidden seed + FIRST .. + FIRST + SEEDS - 1 (two processes can share a long calibration:
`--first 0 --seeds 10` and `--first 10 --seeds 10`). Graded runs use one thread (the worker's setting); other
thread counts change the order of floating-point sums, so the spread is measured at each count students and
machines may use.

Each part with a training check has its spec in autograder/grader/training/ (SPECS): the reference's run, its
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
from autograder.public.compare import CheckFailed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder.grader.calibrate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
    ctx.data  # noqa: B018 (the hidden data as a grade loads it (one thread: the encoder's outputs depend on the thread count)
    torch.set_num_threads(args.threads)  # the training runs' thread count
    offsets = range(args.first, args.first + args.seeds)
    print(
        f"hidden data seed {ctx.seed}; training seeds +{offsets[0]} .. +{offsets[-1]}; "
        f"{args.threads} thread{'s' if args.threads > 1 else ''}\n"
    )
    print("| part | " + " | ".join(f"seed +{i}" for i in offsets) + " | min | mean | sd | threshold | CPU s per run |")
    print("|---" * (args.seeds + 6) + "|", flush=True)
    failures = []
    for part in args.part or SPECS:
        spec = SPECS[part]
        scores, failed, t0 = [], [], time.process_time()
        extra_rows: dict[str, tuple] = {}  # the reply checks' rows: name -> (values, threshold or "")
        for i in offsets:
            if spec.reply_checks:
                score, verdict = calibrate_with_reply_checks(spec, ctx, i, extra_rows, failed)
            else:
                score, verdict = spec.calibrate(ctx, ctx.seed + i)
            scores.append(score)
            if verdict is not None:
                failed.append(f"+{i}: {verdict}")
        per_run = (time.process_time() - t0) / args.seeds
        print(row(part, scores, spec.threshold, per_run), flush=True)
        for name, (values, threshold) in extra_rows.items():
            print(row(f"{part} {name}", values, threshold, None), flush=True)
        failures.extend(f"{part} seed {line}" for line in failed)
    print(
        "\nthe checks' verdicts on the reference: "
        + ("pass on every seed" if not failures else "FAIL on " + "; ".join(failures))
    )
    return 1 if failures else 0


def row(name: str, values: list[float], threshold, per_run: float | None) -> str:
    """One line of the table: each seed's value, min, mean, sd, the threshold and the CPU seconds per run."""
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return (
        f"| {name} | " + " | ".join(f"{v:.3f}" for v in values) + f" | {min(values):.3f} | "
        f"{statistics.mean(values):.3f} | {sd:.3f} | {threshold} | {'' if per_run is None else f'{per_run:.1f}'} |"
    )


def calibrate_with_reply_checks(spec, ctx: GradingContext, offset: int, rows: dict, failed: list) -> tuple:
    """The reference's run with training seed +offset for a spec with reply checks (TrainingSpec.calibrate_stopped):
    its score and verdict after all epochs, as for every spec; into `rows`, per reply check, its score at the epoch
    the check's run stops (judged: a failing verdict goes into `failed`), after all epochs, and its broken models'
    scores at the stop; and the stop epoch."""
    run = spec.calibrate_stopped(ctx, ctx.seed + offset)

    def add(name: str, value: float, threshold="") -> None:
        rows.setdefault(name, ([], threshold))[0].append(value)

    add("epoch the run stops", run.epoch)
    for extra in spec.reply_checks:
        add(f"{extra.metric} at the stop", extra.score(run.stopped, ctx), extra.threshold)
        try:
            extra.judge(run.stopped, ctx)
        except CheckFailed as exc:
            failed.append(f"+{offset} ({extra.check}): {exc}")
        add(f"{extra.metric} after all epochs", extra.score(run.full, ctx))
        for name in extra.broken:
            add(f"{extra.metric} at the stop, broken: {name}", extra.score(run.broken[(extra.check, name)], ctx))
    return spec.score_of(run.full, ctx), spec.failure(run.full, ctx)


if __name__ == "__main__":
    raise SystemExit(main())
