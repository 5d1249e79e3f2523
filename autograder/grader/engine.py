"""Grade a submission folder: for each part, one worker runs the student's module; each check of
the part runs in the grading process against it; each check's outcome becomes one scored result.

Parts are graded in an order where a part's worker only ever needs the reference code of parts
already graded (decoding before everything that decodes, Part 1 before the parts that train with
its loss, attention before hard attention).
"""
from __future__ import annotations

import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autograder.grader import rubric as rubric_mod
from autograder.public.checks import Check, checks_of
from autograder.public.compare import CheckFailed
from autograder.grader.context import GradingContext
from autograder.public.progress import Progress
from autograder.public.client import TIME_SCALE, StudentError, Worker, WorkerDied, WorkerFactory, remove_tree
from autograder.grader.isolation import Isolation, build_runtime, detect
from autograder.worker.memory import release_memory
from autograder.public.staging import StagingError
from autograder.worker.main import clean
from shared.parts import BY_MODULE, MODULES

GRADING_ORDER = ("bleu", "decoding", "show_and_tell", "attention", "reinforce", "lstm_a", "stylenet")
assert sorted(GRADING_ORDER) == sorted(MODULES)
# The reference modules a part's worker may hold (for training and decoding): only parts graded before it.
REFERENCES = {"bleu": (), "decoding": (), "show_and_tell": ("decoding",),
              "attention": ("decoding", "show_and_tell"), "reinforce": ("decoding", "show_and_tell", "attention"),
              "lstm_a": ("decoding", "show_and_tell"), "stylenet": ("decoding", "show_and_tell")}
assert all(GRADING_ORDER.index(r) < GRADING_ORDER.index(p) for p, refs in REFERENCES.items() for r in refs)
SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"
# Wall-clock seconds a part may take in all (worker start-ups, every check, training included).
PART_TIME_LIMIT = 300.0
OUTPUT_LIMIT = 2000  # characters of feedback per check
GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"


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


def _outcome(exc: BaseException, chk: Check, visible: bool) -> tuple[str, str] | None:
    """(student-visible output, staff note) for a failure, or None if `exc` is not a verdict on the student."""
    if isinstance(exc, CheckFailed):
        message = str(exc).split("\nFalsifying example")[0].strip()
        hidden = f"failed: {chk.description}" + (f" ({exc.safe})" if exc.safe else "")
        return (message if visible else hidden), message
    if isinstance(exc, StudentError):
        where = f"\n{exc.where.rstrip()}" if exc.where else ""
        shown = f"your code raised {exc.kind}: {exc.detail}{where}" if visible else f"your code raised {exc.kind}"
        return shown, f"{exc.kind}: {exc.detail}{where}"
    if isinstance(exc, WorkerDied):
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


def _run_check(chk: Check, worker, ctx: GradingContext, visible: bool) -> tuple[bool, str, str]:
    """(passed, student-visible output, staff note) for one check."""
    try:
        chk.fn(worker, ctx)
        return True, "passed", ""
    except Exception as exc:
        for candidate in _candidates(exc):
            outcome = _outcome(candidate, chk, visible)
            if outcome is not None:
                shown, note = outcome
                return False, clean(shown, OUTPUT_LIMIT), clean(note, 4 * OUTPUT_LIMIT)
        note = "".join(traceback.format_exception(exc))[-3000:]
        return False, GRADER_ERROR, note


def grade(submission: Path, *, public_only: bool = False, parts: tuple[str, ...] | None = None,
          scratch: Path | None = None, ctx: GradingContext | None = None,
          worker_factory: WorkerFactory | None = None, skip_training: bool = False,
          progress: Progress | None = None, time_limit: float | None = None) -> GradeReport:
    """Grade every part (or `parts`) of the submission folder; never raises for a bad submission.

    worker_factory makes the worker each part's checks call (default: a sandboxed worker process,
    autograder.public.client.Worker, isolated as this machine allows). skip_training=True leaves out the
    training checks (the kit's own tests of property checks use it). progress: told where the run is
    (autograder/progress.py; by default nothing is shown). time_limit: wall-clock seconds for
    the whole submission (x CAPTIONKIT_TIME_SCALE), on top of each part's; the parts it leaves no time for are not
    run."""
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
    runtime = build_runtime(scratch / "runtime")
    worker_factory = worker_factory or sandboxed_workers(runtime, isolation)
    ctx = ctx or GradingContext(scratch=scratch / "grader", shared=scratch / "shared")
    ctx.take_artifacts()  # a context may serve several runs: this report holds this run's artifacts only
    progress = progress or Progress()
    graded = [p for p in GRADING_ORDER if parts is None or p in parts]
    counts = {p: len(_graded_checks(p, rubric.get(p, {}), public_only, skip_training)) for p in graded}
    progress.begin(sum(counts.values()))
    try:
        if not skip_training:
            progress.step("timing the reference's training runs")
            _time_references([p for p in graded if (Path(submission) / f"{p}.py").is_file()], ctx, rubric,
                             public_only)
        for i, part in enumerate(graded):
            progress.part(i + 1, len(graded), part, counts[part])
            deadline = time.monotonic() + PART_TIME_LIMIT * TIME_SCALE
            if time_limit is not None:
                deadline = min(deadline, started + time_limit * TIME_SCALE)
            try:
                results = _grade_part(part, Path(submission), scratch / part, ctx, rubric.get(part, {}), public_only,
                                      worker_factory, skip_training, progress, deadline)
            except Exception as exc:  # noqa: BLE001 (the grader's own error costs this part, never the results file)
                note = "".join(traceback.format_exception(exc))[-3000:]
                entries = rubric.get(part, {})
                results = [CheckResult(part, c.name, f"{BY_MODULE[part].number}.{n + 1}", c.description, 0.0,
                                       entries[c.name].points, entries[c.name].visibility, GRADER_ERROR, 0.0, note)
                           for n, c in enumerate(_graded_checks(part, entries, public_only, skip_training))]
            report.results.extend(results)
            progress.part_done(sum(r.score for r in results), sum(r.max_score for r in results))
    finally:
        progress.end()
        if own_scratch:
            remove_tree(scratch)
    number = {m: BY_MODULE[m].number for m in MODULES}
    report.results.sort(key=lambda r: (number[r.part], [int(x) for x in r.number.split(".")]))
    report.seconds = time.monotonic() - started
    report.artifacts = ctx.take_artifacts()
    return report


def sandboxed_workers(runtime: Path, isolation: Isolation) -> WorkerFactory:
    """The factory of the grader's workers: a sandboxed worker process running from `runtime` (a copy of the
    worker zone and shared/, isolation.build_runtime), isolated by `isolation`."""
    def make(part: str, submission: Path, scratch: Path, references: dict[str, str], deadline: float | None):
        return Worker(part, submission, scratch, runtime, isolation, references, deadline=deadline)
    return make


def _graded_checks(part: str, entries: dict[str, rubric_mod.Entry], public_only: bool,
                   skip_training: bool) -> list[Check]:
    """The checks of `part` this run grades, in order. Only checks with a rubric entry are graded;
    tests/test_grader.py fails when the two disagree."""
    return [c for c in checks_of(part) if c.name in entries and not (skip_training and c.training)
            and (not public_only or entries[c.name].visibility == "public")]


def _time_references(parts: list[str], ctx: GradingContext, rubric: dict, public_only: bool) -> None:
    """Time the reference run behind every training check to be graded, before any worker exists: each
    timing run is a forked copy of this process (GradingContext.budget), and one beside a worker would put
    three processes' memory at once into the container's peak. A run that fails here is left to its check,
    which calls the budget again and reports the grader's error in its own result."""
    for part in parts:
        for chk in _graded_checks(part, rubric.get(part, {}), public_only, skip_training=False):
            if chk.budget is not None:
                try:
                    chk.budget(ctx)
                except Exception:  # noqa: BLE001 (reported by the check itself)
                    pass


def _grade_part(part: str, submission: Path, scratch: Path, ctx: GradingContext,
                entries: dict[str, rubric_mod.Entry], public_only: bool, worker_factory: WorkerFactory,
                skip_training: bool = False, progress: Progress | None = None,
                deadline: float | None = None) -> list[CheckResult]:
    checks = _graded_checks(part, entries, public_only, skip_training)
    progress = progress or Progress()
    part_number = BY_MODULE[part].number
    results = []

    def result(i: int, chk: Check, passed: bool, output: str, seconds: float, note: str = "") -> CheckResult:
        entry = entries[chk.name]
        return CheckResult(part, chk.name, f"{part_number}.{i + 1}", chk.description,
                           entry.points if passed else 0.0, entry.points, entry.visibility, output, seconds, note)

    references = {name: (SOLUTIONS / f"{name}.py").read_text() for name in REFERENCES[part]}
    try:
        worker = worker_factory(part, submission, scratch, references,
                                deadline if deadline is not None else time.monotonic() + PART_TIME_LIMIT * TIME_SCALE)
    except StagingError as exc:
        return [result(i, c, False, str(exc), 0.0) for i, c in enumerate(checks)]
    worker.on_progress = progress.epoch
    try:
        if worker.import_error is not None:
            err = worker.import_error
            line = f"{part}.py could not be imported: {err.kind}: {err.detail}"
            return [result(i, c, False, line, 0.0, err.where) for i, c in enumerate(checks)]
        if not worker.alive:
            return [result(i, c, False, worker.dead_reason or "the worker did not start", 0.0)
                    for i, c in enumerate(checks)]
        # Public checks first, then the hidden ones in a fresh worker: nothing a hidden check passes to the student's
        # code (the same inputs on every run) can be kept and shown in a public check's feedback.
        order = sorted(range(len(checks)), key=lambda i: entries[checks[i].name].visibility != "public")
        served_public = False   # the running worker has seen a public check's inputs
        for step, i in enumerate(order):
            chk = checks[i]
            visible = entries[chk.name].visibility == "public"
            if not visible and served_public and (worker.deadline is None or time.monotonic() < worker.deadline):
                worker.restart()
                served_public = False
            t0 = time.monotonic()
            if worker.deadline is not None and t0 >= worker.deadline:
                results.append(result(i, chk, False, f"not run: the part's time limit ({PART_TIME_LIMIT:.0f} s) "
                                                     "was reached", 0.0))
                continue
            worker.check_deadline = t0 + chk.timeout * TIME_SCALE
            progress.check(f"{part_number}.{i + 1}", chk.name, chk.training)
            passed, output, note = _run_check(chk, worker, ctx, visible)
            progress.check_done()
            results.append(result(i, chk, passed, output, time.monotonic() - t0, note))
            served_public = served_public or visible
            if chk.training:  # the large heaps; a collection costs about 0.2 s, too much after every check
                release_memory()
            # A crash or a timeout costs this check; the next one (if there is time for it) gets a fresh worker.
            if not worker.alive and step + 1 < len(order) and (worker.deadline is None
                                                               or time.monotonic() < worker.deadline):
                worker.restart()
                served_public = False
        return results
    finally:
        worker.close()
