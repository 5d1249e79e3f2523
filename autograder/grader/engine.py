"""Grade a submission folder: for each part, one worker runs the student's module; each check of
the part runs in the grading process against it; each check's outcome becomes one scored result.

Parts are graded in an order where a part's worker only ever needs the reference code of parts
already graded (decoding before everything that decodes, Part 1 before the parts that train with
its loss, attention before hard attention).
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

from autograder.grader import rubric as rubric_mod
from autograder.grader.checks import Check, checks_of
from autograder.grader.context import GradingContext
from autograder.grader.isolation import detect
from autograder.grader.sandbox import Sandbox
from autograder.public import limits
from autograder.public.checks import Round
from autograder.public.client import Worker, WorkerFactory, copy_runtime, remove_tree
from autograder.public.grade_report import CheckResult, GradeReport
from autograder.public.limits import Deadline, earliest, part_deadline
from autograder.public.progress import Progress
from autograder.public.runner import GRADER_ERROR, PartGrade
from autograder.public.training import OTHER_PARTS
from shared.parts import BY_MODULE, MODULES

# BLEU last: grading it imports its oracles (nltk, pycocoevalcap: 23 MB in the grading process for the rest of the
# grade), which would otherwise sit beside every training worker, where a grade's peak memory is.
GRADING_ORDER = ("decoding", "show_and_tell", "attention", "reinforce", "lstm_a", "stylenet", "bleu")
assert sorted(GRADING_ORDER) == sorted(MODULES)
# The reference modules a part's worker may hold (for training and decoding): only parts graded before it. The other
# parts a part's recipes use are public (the handout's `check --train` sends the student's own modules instead).
REFERENCES = OTHER_PARTS
assert all(GRADING_ORDER.index(r) < GRADING_ORDER.index(p) for p, refs in REFERENCES.items() for r in refs)
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


TRAINING = ("with", "without", "only")  # GradeOptions.training


@dataclass(frozen=True)
class GradeOptions:
    """What a grade runs.

    parts: the parts to grade (None: every part). public_only: the public checks alone. training: "with" the
    training checks (a full grade), "without" them (the kit's own tests of property checks), or "only" them.
    grader_cases: every public check also runs on cases drawn from the hidden test secret (its grader's round,
    autograder.public.checks.Round); False is what a student's own `check` runs. time_limit: seconds for the whole
    submission (x LIMITS.scale, autograder.public.limits) on top of each part's; the parts it leaves no time for are
    not run."""

    parts: tuple[str, ...] | None = None
    public_only: bool = False
    training: str = "with"
    grader_cases: bool = True
    time_limit: float | None = None

    def __post_init__(self):
        if self.training not in TRAINING:
            raise ValueError(f"training: expected one of {', '.join(TRAINING)}, got {self.training!r}")
        unknown = sorted(set(self.parts or ()) - set(MODULES))
        if unknown:
            raise ValueError(f"parts: expected parts of {', '.join(MODULES)}, got {', '.join(map(repr, unknown))}")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ValueError(f"time_limit: expected a positive number of seconds, got {self.time_limit!r}")

    def runs(self, check: Check, visibility: str) -> bool:
        """Whether a grade of the check's part runs `check`, whose rubric visibility is `visibility`."""
        wanted = {"with": True, "without": not check.training, "only": check.training}[self.training]
        return wanted and (not self.public_only or visibility == "public")


def grade(
    submission: Path,
    options: GradeOptions = GradeOptions(),
    *,
    scratch: Path | None = None,
    ctx: GradingContext | None = None,
    worker_factory: WorkerFactory | None = None,
    progress: Progress | None = None,
) -> GradeReport:
    """Grade the submission folder as `options` say (by default every check of every part); never raises for a
    bad submission.

    The steps: the sandbox this machine allows and the worker's runtime copy; the optimizers' import timed when a
    training check is graded; every part's public checks (first phase, parts in reverse GRADING_ORDER); then every
    part's grader's rounds and hidden checks (second phase); the results in rubric order.

    worker_factory makes the worker each part's checks call (default: a sandboxed worker process,
    autograder.public.client.Worker, isolated as this machine allows). progress: told where the run is
    (autograder/public/progress.py; by default nothing is shown)."""
    torch.set_num_threads(1)
    rubric = rubric_mod.load()
    report = GradeReport()
    started = time.monotonic()
    own_scratch = scratch is None
    scratch = Path(tempfile.mkdtemp(prefix="captionkit-grade-")) if own_scratch else Path(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    os.chmod(scratch, 0o711)  # the sandbox user may pass through to what it is given, and list nothing
    isolation = detect()
    report.notes.append(isolation.note)
    runtime = copy_runtime(scratch / "runtime")
    worker_factory = worker_factory or sandboxed_workers(runtime, isolation)
    ctx = ctx or GradingContext(scratch=scratch / "grader", shared=scratch / "shared")
    ctx.take_artifacts()  # a context may serve several runs: this report holds this run's artifacts only
    progress = progress or Progress()
    graded = [p for p in GRADING_ORDER if options.parts is None or p in options.parts]
    checks = {p: _graded_checks(p, rubric.get(p, {}), options) for p in graded}
    counts = {p: len(checks[p]) for p in graded}
    publics = {p: sum(rubric[p][c.name].visibility == "public" for c in checks[p]) for p in graded}  # first phase
    progress.begin(sum(counts.values()))
    begun: list[tuple[int, str, PartGrade | None, float, str]] = []  # each part after its first phase
    try:
        if any(c.training for p in graded if (Path(submission) / f"{p}.py").is_file() for c in checks[p]):
            progress.step("timing the optimizers' first-use import")
            ctx.time_optimizer_import()  # before any worker exists: every training run's first time limit needs it
        # Every part's public checks first, then every part's grader's rounds and hidden checks (runner.PartGrade):
        # no worker given anything hidden runs before a worker whose messages are shown at once. The first phases run
        # in reverse order, so that the first part's second phase follows its first at once, in the same zygote (a
        # grade of one part starts no more zygotes than before the two phases).
        ends_by = None if options.time_limit is None else started + limits.LIMITS.seconds(options.time_limit)
        for i, part in reversed(list(enumerate(graded))):
            progress.part(i + 1, len(graded), part, publics[part])
            deadline = part_deadline(ends_by)
            try:
                partial = _part_grade(
                    part,
                    Path(submission),
                    scratch / part,
                    ctx,
                    rubric.get(part, {}),
                    options,
                    worker_factory,
                    progress,
                    deadline,
                )
                partial.public(pause=i > 0)  # the first part's second phase comes next
            except Exception as exc:  # noqa: BLE001 (the grader's own error costs this part, never the results file)
                report.results.extend(_grader_error(part, exc, rubric, options))
                partial = None
            begun.append((i, part, partial, deadline.left(), deadline.reached))
        for i, part, partial, left, reached in reversed(begun):
            if partial is None:
                continue
            progress.part(i + 1, len(graded), part, counts[part] - publics[part])
            deadline = earliest(
                Deadline.after(max(left, 0.0), reached),
                None if ends_by is None else Deadline(ends_by, "the submission's time limit was reached"),
            )
            try:
                results = partial.rest(deadline)
            except Exception as exc:  # noqa: BLE001
                results = _grader_error(part, exc, rubric, options)
            report.results.extend(results)
            progress.part_done(sum(r.score for r in results), sum(r.max_score for r in results))
    finally:
        progress.end()
        for _, _, partial, _, _ in begun:
            if partial is not None and not partial.over:  # an error of the grader's between the two phases
                partial.worker.close()
        if own_scratch:
            remove_tree(scratch)
    number = {m: BY_MODULE[m].number for m in MODULES}
    report.results.sort(key=lambda r: (number[r.part], [int(x) for x in r.number.split(".")]))
    report.seconds = time.monotonic() - started
    report.artifacts = ctx.take_artifacts()
    if options.public_only:  # what the totals are out of once the hidden and training checks are graded too
        report.full_points = {p: sum(e.points for e in rubric.get(p, {}).values()) for p in graded}
    return report


def sandboxed_workers(runtime: Path, isolation: Sandbox) -> WorkerFactory:
    """The factory of the grader's workers: a sandboxed worker process running from `runtime` (a copy of the
    worker zone and shared/, client.copy_runtime), isolated by `isolation`."""

    def make(part: str, submission: Path, scratch: Path, references: dict[str, str], deadline: Deadline | None):
        return Worker(part, submission, scratch, runtime, isolation, references, deadline=deadline)

    return make


def _graded_checks(part: str, entries: dict[str, rubric_mod.Entry], options: GradeOptions) -> list[Check]:
    """The checks of `part` this run grades, in order. Only checks with a rubric entry are graded;
    tests/grader/test_grader.py fails when the two disagree."""
    return [c for c in checks_of(part) if c.name in entries and options.runs(c, entries[c.name].visibility)]


def _part_grade(
    part: str,
    submission: Path,
    scratch: Path,
    ctx: GradingContext,
    entries: dict[str, rubric_mod.Entry],
    options: GradeOptions,
    worker_factory: WorkerFactory,
    progress: Progress | None = None,
    deadline: Deadline | None = None,
) -> PartGrade:
    """The part's graded checks, to run against the part's worker (autograder.public.runner.PartGrade) until
    `deadline` (default: the part's time limit from now)."""
    references = {name: (SOLUTIONS / f"{name}.py").read_text() for name in REFERENCES[part]}
    deadline = deadline or part_deadline()
    return PartGrade(
        part,
        BY_MODULE[part].number,
        _graded_checks(part, entries, options),
        entries,
        lambda: worker_factory(part, submission, scratch, references, deadline),
        ctx,
        (lambda chk: grader_round(ctx, chk)) if options.grader_cases else None,
        progress,
    )


def _grader_error(part: str, exc: Exception, rubric: dict, options: GradeOptions) -> list[CheckResult]:
    """Every graded check of `part` failed by the grader's own error `exc` (the traceback is the staff's note)."""
    note = "".join(traceback.format_exception(exc))[-3000:]
    entries = rubric.get(part, {})
    return [
        CheckResult(
            part,
            c.name,
            f"{BY_MODULE[part].number}.{entries[c.name].number}",
            c.description,
            0.0,
            entries[c.name].points,
            entries[c.name].visibility,
            GRADER_ERROR,
            0.0,
            note,
        )
        for c in _graded_checks(part, entries, options)
    ]


def grader_round(ctx: GradingContext, chk: Check) -> Round:
    """The grader's round of a public check: cases drawn from a seed derived from the hidden test secret and the
    check (so each check draws its own, and a student who sees one course's cases learns nothing of the next's), and
    the reference modules for expected values no public oracle gives. The test secret, not the training seed: the
    training data is given to student code, and the small seed behind it can be found by search (docs/security.md);
    whoever knew the round's seed could compute its answers with the public oracles and store them."""
    digest = hashlib.sha256(f"{ctx.test_secret:x}:{chk.part}.{chk.name}".encode()).digest()
    return Round(seed=int.from_bytes(digest[:4], "big"), reference=_reference_module)


def _reference_module(part: str):
    """The reference solution of `part` (solutions/<part>.py), in this process."""
    return importlib.import_module(f"solutions.{part}")
