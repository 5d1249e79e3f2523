"""The score of every epoch of the training checks' runs: what stopping a run at the threshold changes.

    python benchmarks/epoch_scores.py [--seeds 5] [--first-seed 0] [--part PART ...] [--variants] [--variant NAME ...]
                                      [--threads N ...] [--option KEY=VALUE ...]

A training check stops a run after the first epoch whose captions reach the threshold (autograder/grader/training/,
`reached`) instead of always training for the budget's epochs. The grade means the same if every run that reaches
the threshold at some epoch also ends above it after all its epochs, and every run that never does stays below at
every epoch. For the reference over training seeds +0 .. +SEEDS-1 (as `python -m autograder.grader.calibrate`) and,
with --variants, for the correct and the broken variants of tests/meta that change the trained part, this trains
each part's check with its recipe (the worker's, with the student's module imported here:
benchmarks/inprocess_worker.py), scores the captions after every epoch without stopping, and prints per run: the
epoch the threshold is first reached, the lowest score after it, the last epoch's score, and whether the verdict
differs. A run "reaches the threshold" at an epoch whose captions pass the check's whole verdict (StyleNet's also asks
the two style rates; its score is the factual content slots). --variant NAME also trains
that variant on every training seed beside the reference (the spread of a broken model); --threads N trains every
run at each of these thread counts (the worker trains with one; docs/thresholds.md calibrates at 1 and 2), on the
hidden data the grading process builds (one thread).
--option KEY=VALUE passes one more setting (a JSON value) to the part's training recipe: the hard-attention settings
docs/thresholds.md measured (autograder/worker/recipes/reinforce.py: mix, lam, blind_start, centre), or another value
of the published budget's epochs, batch_size or lr (what a cheaper budget would do to the epoch a run passes at).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from inprocess_worker import InProcessWorker  # noqa: E402

from autograder.grader.context import GradingContext  # noqa: E402
from autograder.grader.training import SPECS, share_split  # noqa: E402
from autograder.worker import recipes  # noqa: E402

OPTIONS: dict = {}
STOPPED = ("show_and_tell", "attention", "reinforce", "lstm_a", "stylenet")  # the parts whose runs a threshold stops


def judged(spec, out, ctx: GradingContext) -> tuple[float, bool]:
    """(score, whether the verdict passes) of a training recipe's reply, as the check judges it."""
    return spec.score_of(out, ctx), spec.failure(out, ctx) is None


def epoch_scores(part: str, submission: Path, ctx: GradingContext, seed: int) -> tuple[list, float]:
    """([(score, verdict passes)] after each epoch, CPU seconds) of `part`'s training check run on `submission`
    with training seed `seed`, never stopped."""
    spec = SPECS[part]
    scores: list = []

    def record(epoch: int, epochs: int, tokens) -> bool:
        scores.append(judged(spec, {"tokens": tokens}, ctx))
        return False

    worker = InProcessWorker(part, submission, Path(tempfile.mkdtemp(prefix="captionkit-epochs-")))
    try:
        t0 = time.process_time()
        budget = dict(epochs=spec.epochs, batch_size=spec.batch_size, lr=spec.lr)
        out = worker.call(
            spec.recipe,
            evaluate=record,
            data=share_split(ctx),
            seed=seed,
            **{**budget, **spec.published.options, **spec.options, **OPTIONS},
        )
        seconds = time.process_time() - t0
    finally:
        worker.close()
    return scores + [judged(spec, out, ctx)], seconds


def summary(name: str, epochs: list, seconds: float) -> str:
    """One table row: where the run first passes the verdict, its lowest score from there on (with * after each
    epoch whose verdict fails), its last score."""
    scores = [s for s, _ in epochs]
    first = next((i for i, (_, passed) in enumerate(epochs) if passed), None)
    lowest_after = min(scores[first:]) if first is not None else None
    full, stopped = epochs[-1][1], first is not None
    dips = "" if first is None or all(p for _, p in epochs[first:]) else " (fails again after)"
    return (
        f"| {name} | "
        + " ".join(f"{s:.3f}{'' if p else '*'}" for s, p in epochs)
        + f" | {first + 1 if stopped else '-'} | "
        f"{f'{lowest_after:.3f}' if stopped else '-'}{dips} | {scores[-1]:.3f} | {'pass' if full else 'fail'} | "
        f"{'pass' if stopped else 'fail'}{'' if full == stopped else ' (DIFFERS)'} | {seconds:.1f} |"
    )


def variants_of(part: str) -> list:
    """The variants of tests/meta that edit `part` (its correct alternatives and its bugs)."""
    from tests.meta.variants import all_variants

    return [v for v in all_variants() if v.part == part]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0, help="the first training seed's offset (default +0)")
    parser.add_argument("--part", action="append", choices=STOPPED)
    parser.add_argument("--variants", action="store_true", help="also every variant of tests/meta of the part")
    parser.add_argument(
        "--variant",
        action="append",
        metavar="NAME",
        help="also this variant of tests/meta, over every training seed (repeatable)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        action="append",
        help="torch threads of the training runs (repeatable; default 1, as the worker trains)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="pass KEY=VALUE (a JSON value) to the training recipe (repeatable)",
    )
    args = parser.parse_args()
    for option in args.option:
        key, _, value = option.partition("=")
        try:
            OPTIONS[key] = json.loads(value)
        except json.JSONDecodeError:
            parser.error(f"--option: expected KEY=VALUE with a JSON value (mix=0, blind_start=true), got {option!r}")
    threads = args.threads or [1]
    if min(threads) < 1:
        parser.error(f"--threads: expected whole numbers >= 1, got {threads}")
    unknown = set(args.variant or ()) - {v.name for part in args.part or STOPPED for v in variants_of(part)}
    if unknown:
        parser.error(f"--variant: no variant of the parts measured is named {', '.join(sorted(unknown))}")
    from solutions import attention, decoding, show_and_tell  # the references a recipe uses (engine.REFERENCES)
    from tests.meta.variants import make_submission

    recipes.REFERENCES.update(decoding=decoding, show_and_tell=show_and_tell, attention=attention)
    torch.set_num_threads(1)  # the hidden data as the grading process builds it (its encoder cache is per thread count)
    ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-epochs-")))
    ctx.data  # noqa: B018 (the property loads the hidden data)
    print(f"hidden data seed {ctx.seed}; training threads {', '.join(map(str, threads))}")
    for part in args.part or STOPPED:
        spec = SPECS[part]
        print(f"\n{part}: threshold {spec.threshold}, {spec.epochs} epochs\n")
        print(
            "| run | score after each epoch (* verdict fails) | first epoch passing | lowest after | last | "
            "verdict, all epochs | verdict, stopped | CPU s |"
        )
        print("|---|---|---|---|---|---|---|---|")
        named = [v for v in variants_of(part) if v.name in (args.variant or ())]
        # seed by seed, so that a measurement cut short holds every model on the seeds it reached
        runs = [
            (v, i, n)
            for i in range(args.first_seed, args.first_seed + args.seeds)
            for n in threads
            for v in [None] + named
        ]
        runs += [(v, 0, threads[0]) for v in variants_of(part)] if args.variants else []
        for variant, i, n in runs:
            torch.set_num_threads(n)
            folder = (
                ROOT / "solutions"
                if variant is None
                else make_submission(Path(tempfile.mkdtemp(prefix="captionkit-variant-")), variant)
            )
            name = (
                ("reference" if variant is None else f"{'correct' if variant.correct else 'broken'} {variant.name}")
                + f", seed +{i}"
                + (f", {n} threads" if len(threads) > 1 else "")
            )
            try:
                scores, seconds = epoch_scores(part, folder, ctx, ctx.seed + i)
            except Exception as exc:  # noqa: BLE001 (a broken variant may fail to train at all)
                print(f"| {name} | raised {type(exc).__name__}: {str(exc)[:80]} | | | | | | |", flush=True)
                continue
            print(summary(name, scores, seconds), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
