"""`python -m instructor secret-sweep`: grade the reference under fresh hidden test secrets, before a course draws its
own.

Every public check also runs on cases drawn from the course's test secret (autograder.grader.engine.grader_round), so
a check whose cases are right under one secret may be wrong under another: one drawn case the check's own rule
misjudges costs a correct submission its point in that course only, and the kit's tests, which grade under the
committed secret, never see it. This grades the reference solutions (or `--submission DIR`) without the training
checks under `--secrets N` secrets drawn afresh, prints one line per secret and, for every point lost, the check,
what the student would read and the staff note (the failing case), and exits 1 when any point was lost. A lost
point here is the check's bug, not the reference's: fix the check, then sweep again.

    python -m instructor secret-sweep [--secrets 10] [--part PART ...] [--submission solutions]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from autograder.grader import engine
from autograder.grader.context import GradingContext, new_test_secret
from shared.parts import MODULES

ROOT = Path(__file__).resolve().parents[1]


def sweep(
    submission: Path,
    secrets: Iterable[str],
    parts: tuple[str, ...] | None = None,
) -> Iterator[tuple[str, list]]:
    """(secret, the results that lost points) of `submission` graded without training, one secret at a time: each
    pair comes as soon as its grade ends (a grade takes about half a minute), so `run` can print it then."""
    for secret in secrets:
        with tempfile.TemporaryDirectory(prefix="captionkit-sweep-") as scratch:
            ctx = GradingContext(Path(scratch) / "grader", shared=Path(scratch) / "shared", test_secret=secret)
            report = engine.grade(submission, engine.GradeOptions(parts=parts, training="without"), ctx=ctx)
        yield secret, [r for r in report.results if r.score < r.max_score]


def run(args: argparse.Namespace) -> int:
    if args.secrets < 1:
        raise SystemExit(f"--secrets: expected a whole number >= 1, got {args.secrets}")
    submission = Path(args.submission)
    if not submission.is_dir():
        raise SystemExit(f"--submission: expected a folder of the seven modules, got {submission}")
    lost_any = False
    for secret, lost in sweep(
        submission, (new_test_secret() for _ in range(args.secrets)), tuple(args.part) if args.part else None
    ):
        lost_any = lost_any or bool(lost)
        print(
            f"secret {secret}: "
            + ("every point" if not lost else f"{len(lost)} check{'s' if len(lost) > 1 else ''} lost points"),
            flush=True,
        )
        for r in lost:
            print(f"  {r.number} {r.part}.{r.name} ({r.visibility}): {r.score:g} / {r.max_score:g}")
            note = (r.staff_note or "").strip()
            shown = note if note and r.output.strip() in note else "\n".join(filter(None, (r.output.strip(), note)))
            for line in shown.splitlines():
                print(f"    {line}")
    return 1 if lost_any else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `secret-sweep` command to the instructor CLI."""
    command = subparsers.add_parser(
        "secret-sweep",
        help="grade the reference under fresh test secrets (no training); exit 1 if a check costs it a point under any",
    )
    command.add_argument("--secrets", type=int, default=10, help="how many fresh secrets (default 10)")
    command.add_argument("--part", action="append", choices=MODULES, help="only this part (repeatable)")
    command.add_argument(
        "--submission", default=str(ROOT / "solutions"), help="the folder graded (default: the reference solutions)"
    )
    command.set_defaults(run=run)
