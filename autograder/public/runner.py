"""Run one part's checks against a worker and score them: the core the grader's engine and a student's own
`check` share, so both print the same lines for the same check.

For each check in order: give it the part's worker, turn its outcome into a CheckResult (passed, or the one
line a student may see: the check's message for a public check, only its property for a hidden one), restart
the worker after a crash, and stop at the part's deadline. What is graded (which checks, their points and
visibility, the worker) is the caller's choice: autograder/grader/engine.py for a grade, the public checker for
a student's working copy.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

from autograder.public import limits
from autograder.public.checks import PUBLIC_ROUND, Check, Round, running_as
from autograder.public.client import StudentError, StudentWorker, WorkerDied
from autograder.public.compare import CheckFailed
from autograder.public.golden import GoldenDataError
from autograder.public.limits import Deadline
from autograder.public.progress import Progress
from autograder.public.staging import StagingError
from autograder.worker.memory import release_memory
from autograder.worker.protocol import clean
from shared.parts import PARTS

OUTPUT_LIMIT = 2000  # characters of feedback per check
GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"


@dataclass(frozen=True)
class Entry:
    """What a check is worth and who sees its details: one entry of the rubric."""
    points: float
    visibility: str  # "public" or "hidden"
    number: int      # its position among the part's checks in the full rubric, from 1: check 3.2 is bleu's second


@dataclass
class CheckResult:
    part: str
    name: str
    number: str
    description: str
    score: float
    max_score: float
    visibility: str             # "public" or "hidden"
    output: str                 # what the student may see
    seconds: float
    staff_note: str = ""        # details for TAs only (never in student-visible fields)

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass
class GradeReport:
    results: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # part -> {key: plain data} the checks kept with ctx.keep (figures of the student's own trained models, for
    # autograder/grader/report); never in results.json
    artifacts: dict[str, dict] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.results)

    def part_totals(self) -> dict[str, tuple[float, float]]:
        totals = {}
        for r in self.results:
            got, out_of = totals.get(r.part, (0.0, 0.0))
            totals[r.part] = (got + r.score, out_of + r.max_score)
        return totals


GRADER_CASES = "on cases the grader draws from its hidden seed"


def _outcome(exc: BaseException, chk: Check, visible: bool, grader_cases: bool = False) -> tuple[str, str] | None:
    """(student-visible output, staff note) for a failure, or None if `exc` is not a verdict on the student. A
    failure in the grader's round of a public check shows no more than a hidden check's: its cases are not the
    student's to see."""
    if isinstance(exc, CheckFailed):
        message = str(exc).split("\nFalsifying example")[0].strip()
        hidden = f"failed: {chk.description}" + (f" ({exc.safe})" if exc.safe else "")
        if grader_cases:
            hidden = f"failed {GRADER_CASES}: {chk.description}"
        return (message if visible and not grader_cases else hidden), message
    if isinstance(exc, StudentError):
        where = f"\n{exc.where.rstrip()}" if exc.where else ""
        shown = f"your code raised {exc.kind}: {exc.detail}{where}" if visible else f"your code raised {exc.kind}"
        if grader_cases:
            shown = f"your code raised {exc.kind} {GRADER_CASES}"
        return shown, f"{exc.kind}: {exc.detail}{where}"
    if isinstance(exc, (WorkerDied, GoldenDataError)):   # one line each, naming what happened
        return str(exc), str(exc)
    return None


def _candidates(exc: BaseException):
    """`exc`, what it wraps (hypothesis may wrap the verdict), and the members of exception groups."""
    yield exc
    for inner in (exc.__cause__, exc.__context__):
        if inner is not None:
            yield inner
    for member in getattr(exc, "exceptions", ()):  # a FlakyFailure or other exception group
        yield from _candidates(member)


class WithinCheck:
    """The part's worker as one check sees it: each of its calls is passed the check's deadline too."""

    def __init__(self, worker: StudentWorker, deadline: Deadline):
        self.worker, self.deadline = worker, deadline

    def call(self, recipe: str, timeout: float | None = None, **kwargs):
        """The worker's call (autograder.public.client.Worker.call), ending by the check's deadline at the latest."""
        return self.worker.call(recipe, timeout=timeout, deadline=self.deadline, **kwargs)


def run_check(chk: Check, worker: StudentWorker, ctx, visible: bool,
              grader_round: Round | None = None) -> tuple[bool, str, str]:
    """(passed, student-visible output, staff note) for one check: its public round, then, if it passed and
    `grader_round` is given (the grader, for a public check), the same check on the grader's own cases."""
    passed, output, note = _run_round(chk, worker, ctx, visible, PUBLIC_ROUND)
    if passed and grader_round is not None:
        passed, output, note = _run_round(chk, worker, ctx, visible, grader_round)
    return passed, output, note


def _run_round(chk: Check, worker: StudentWorker, ctx, visible: bool, round: Round) -> tuple[bool, str, str]:
    try:
        with running_as("public" if visible else "hidden", round):   # hidden properties do not shrink
            chk.fn(worker, ctx)
        return True, "passed", ""
    except Exception as exc:  # noqa: BLE001 (a verdict on the student, or the grader's error: both reported)
        for candidate in _candidates(exc):
            outcome = _outcome(candidate, chk, visible, grader_cases=not round.public)
            if outcome is not None:
                shown, note = outcome
                return False, clean(shown, OUTPUT_LIMIT), clean(note, 4 * OUTPUT_LIMIT)
        note = "".join(traceback.format_exception(exc))[-3000:]
        return False, GRADER_ERROR, note


def grade_part(part: str, number: int, checks: list[Check], entries: dict[str, Entry],
               start_worker: Callable[[], StudentWorker], ctx, grader_round: Callable[[Check], Round] | None = None,
               progress: Progress | None = None) -> list[CheckResult]:
    """Run `checks` (every one has an entry in `entries`) against one worker of `part`, in order; one result each.
    `grader_round(check)`, given by the grader, is the round of cases drawn from its hidden seed that every public
    check also runs (a public check passes when both rounds pass).

    `number` is the part's number (a check's is `number`.`entry.number`, the same in every output, whichever
    checks a run grades), `start_worker()` starts the part's worker (StagingError: the module cannot
    be staged; the worker holds the part's deadline), `ctx` is handed to every check, `progress` is told of each
    check and training epoch (autograder.public.progress; by default nothing is shown). Each check runs until
    its own limit (Check.timeout, from when it starts) or the part's deadline, whichever comes first."""
    progress = progress or Progress()
    results = []

    def result(chk: Check, passed: bool, output: str, seconds: float, note: str = "") -> CheckResult:
        entry = entries[chk.name]
        return CheckResult(part, chk.name, f"{number}.{entry.number}", chk.description,
                           entry.points if passed else 0.0, entry.points, entry.visibility, output, seconds, note)

    try:
        worker = start_worker()
    except StagingError as exc:
        return [result(c, False, str(exc), 0.0) for c in checks]
    worker.on_progress = progress.epoch
    try:
        if worker.import_error is not None:
            err = worker.import_error
            line = f"{part}.py could not be imported: {err.kind}: {err.detail}"
            return [result(c, False, line, 0.0, err.where) for c in checks]
        if not worker.alive:
            return [result(c, False, worker.dead_reason or "the worker did not start", 0.0) for c in checks]
        # Public checks first, then the hidden ones in a fresh worker: nothing a hidden check passes to the student's
        # code (the same inputs on every run) can be kept and shown in a public check's feedback.
        order = sorted(range(len(checks)), key=lambda i: entries[checks[i].name].visibility != "public")
        served_public = False   # the running worker has seen a public check's inputs
        for step, i in enumerate(order):
            chk = checks[i]
            visible = entries[chk.name].visibility == "public"
            if not visible and served_public and (worker.deadline is None or not worker.deadline.passed):
                worker.restart()
                served_public = False
            t0 = time.monotonic()
            if worker.deadline is not None and worker.deadline.passed:
                results.append(result(chk, False, f"not run: the part's time limit ({limits.LIMITS.part:.0f} s) "
                                                     "was reached", 0.0))
                continue
            check_deadline = Deadline.after(limits.LIMITS.seconds(chk.timeout), "the check's time limit was reached")
            progress.check(f"{number}.{entries[chk.name].number}", chk.name, chk.training)
            passed, output, note = run_check(chk, WithinCheck(worker, check_deadline), ctx, visible,
                                             grader_round(chk) if visible and grader_round is not None else None)
            progress.check_done()
            results.append(result(chk, passed, output, time.monotonic() - t0, note))
            served_public = served_public or visible
            if chk.training:  # the large heaps; a collection costs about 0.2 s, too much after every check
                release_memory()
            # A crash or a timeout costs this check; the next one (if there is time for it) gets a fresh worker.
            if not worker.alive and step + 1 < len(order) and (worker.deadline is None or not worker.deadline.passed):
                worker.restart()
                served_public = False
        return results
    finally:
        worker.close()


def table(report: GradeReport, show_checks: bool = True) -> str:
    """A plain-text table: one line per check (optional) and the total of each part."""
    lines = []
    totals = report.part_totals()
    for p in PARTS:
        if p.module not in totals:
            continue
        got, out_of = totals[p.module]
        lines.append(f"Part {p.number} {p.module:14s} {got:6.1f} / {out_of:5.1f}")
        if show_checks:
            for r in (r for r in report.results if r.part == p.module):
                mark = "PASS" if r.passed else "FAIL"
                lines.append(f"    {r.number:5s} {mark}  {r.score:4.1f}/{r.max_score:<4.1f} {r.name}"
                             + ("" if r.passed else f"\n{_indent(r.output, 18)}"))
    lines.append(f"{'total':21s} {report.score:6.1f} / {report.max_score:5.1f}   ({report.seconds:.1f} s)")
    return "\n".join(lines)


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.splitlines()[:12])
