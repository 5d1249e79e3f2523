"""Run one part's checks against a worker and score them: the core the grader's engine and a student's own
`check` share, so both print the same lines for the same check.

For each check in order: give it the part's worker, turn its outcome into a CheckResult (passed, or the one
line a student may see: the check's message for a public check, only its property for a hidden one), restart
the worker after a crash, and stop at the part's deadline. What is graded (which checks, their points and
visibility, the worker) is the caller's choice: the grader's engine for a grade, the public checker for
a student's working copy.
"""

from __future__ import annotations

import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace

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
from shared.parts import PARTS, TODO_MESSAGE

OUTPUT_LIMIT = 2000  # characters of feedback per check
GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"


@dataclass(frozen=True)
class Entry:
    """What a check is worth and who sees its details: one entry of the rubric."""

    points: float
    visibility: str  # "public" or "hidden"
    number: int  # its position among the part's checks in the full rubric, from 1: check 3.2 is bleu's second


@dataclass
class CheckResult:
    part: str
    name: str
    number: str
    description: str
    score: float
    max_score: float
    visibility: str  # "public" or "hidden"
    output: str  # what the student may see
    seconds: float
    staff_note: str = ""  # details for TAs only (never in student-visible fields): the case, the traceback
    todo: str = ""  # "TODO ngram_counts (bleu.py:113)": the check stopped at a stub's unwritten TODO
    # A public check the grader also ran on its own cases: what its public round alone showed ("passed" or the
    # failure's output), i.e. what a student's `check` shows for the same module; "" for every other check.
    public_round: str = ""

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
    # part -> the points of the part in the full grade, when this run graded only some of its checks (the public
    # ones): what the totals are out of once the hidden and training checks are graded too
    full_points: dict[str, float] = field(default_factory=dict)

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
# One frame of a traceback as traceback.format_list writes it (the worker keeps the student's frames only).
FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')


@dataclass(frozen=True)
class Outcome:
    """One check's verdict: `output` for the student, `note` for the course staff only (the failing case and the
    traceback in the student's file), `todo` when the check stopped at a stub's unwritten TODO, `public_round` (the
    grader's run of a public check only) what the check's public round alone showed."""

    passed: bool
    output: str = "passed"
    note: str = ""
    todo: str = ""
    public_round: str = ""


def raised_at(where: str) -> str:
    """ "bleu.py:113", the file and line of the student's code where an exception was raised (the last of the
    student's frames in `where`), or "" when it raised in none of them."""
    frames = FRAME.findall(where)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else ""


def todo_of(exc: StudentError) -> str:
    """ "TODO ngram_counts (bleu.py:113)" when `exc` is a stub's NotImplementedError, else ""."""
    match = TODO_MESSAGE.search(exc.detail)
    if exc.kind != "NotImplementedError" or match is None:
        return ""
    at = raised_at(exc.where)
    return f"TODO {match.group('function')}" + (f" ({at})" if at else "")


def _with_notes(exc: BaseException, text: str) -> str:
    """`text` and the notes attached to `exc` (hypothesis's falsifying example): the whole case, for the staff."""
    notes = [str(n) for n in getattr(exc, "__notes__", ())]
    return "\n".join([text, *notes])


def _outcome(exc: BaseException, chk: Check, visible: bool, grader_cases: bool = False) -> Outcome | None:
    """The failed Outcome for `exc`, or None if `exc` is not a verdict on the student. A failure in the grader's
    round of a public check shows no more than a hidden check's: its cases are not the student's to see. A hidden
    check's exception, and one in the grader's round, shows that the code raised, and nothing the module chose:
    not its message (which may hold a hidden input; a TODO's message too, since student code may raise one of its
    own choosing), not where it was raised (the module can choose the line by the grader's input, A52), not even
    its kind (one of 70 chosen by the input: six bits a check, A58). Kind, message and location stay in the staff
    note, and are shown in a public check's public round, whose inputs are all public (the kit's security notes)."""
    if isinstance(exc, CheckFailed):
        message = str(exc).split("\nFalsifying example")[0].strip()
        hidden = f"failed: {chk.description}" + (f" ({exc.safe})" if exc.safe else "")
        if grader_cases:
            hidden = f"failed {GRADER_CASES}: {chk.description}"
        return Outcome(False, message if visible and not grader_cases else hidden, _with_notes(exc, str(exc)))
    if isinstance(exc, StudentError):
        where = f"\n{exc.where.rstrip()}" if exc.where else ""
        case = f" [{exc.case}]" if exc.case else ""
        at = raised_at(exc.where)
        todo = todo_of(exc)
        if visible and not grader_cases and todo:  # one line: the stub's TODO and where it is
            shown = f"your code raised NotImplementedError: {TODO_MESSAGE.search(exc.detail).group(0)}" + (
                f" (at {at})" if at else ""
            )
        elif visible and not grader_cases:
            shown = f"your code raised {exc.kind}: {exc.detail}{case}{where}"
        else:  # a stub's TODO: one bit the module could choose, as it chooses which TODO row a check joins
            shown = (
                "your code raised "
                + ("NotImplementedError (an unwritten TODO)" if todo else "an exception")
                + (f" {GRADER_CASES}" if grader_cases else "")
            )
        return Outcome(False, shown, _with_notes(exc, f"{exc.kind}: {exc.detail}{case}{where}"), todo)
    if isinstance(exc, WorkerDied):  # one line, naming what happened; a hidden check only what no student code chose
        return Outcome(False, str(exc) if visible and not grader_cases else exc.shown, str(exc))
    if isinstance(exc, GoldenDataError):
        return Outcome(False, str(exc), str(exc))
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
        """The worker's call (autograder.public.client.Worker.call), ending by the check's deadline at the latest.
        An exception of the student's code names the call that raised it (StudentError.case), unless the check
        names it itself."""
        try:
            return self.worker.call(recipe, timeout=timeout, deadline=self.deadline, **kwargs)
        except StudentError as exc:
            exc.case = exc.case or describe_call(recipe, kwargs)
            raise

    def restart(self) -> None:
        """A fresh worker for the rest of this check (a training check runs again once it knows its budget)."""
        self.worker.restart()


def describe_call(recipe: str, kwargs: dict) -> str:
    """ "decoding.greedy_decode(model=<ToyModel>, features=<tensor (2, 8) float32>, max_len=5)": a call, briefly."""
    return f"{recipe}({', '.join(f'{name}={_brief(value)}' for name, value in kwargs.items())})"


def _brief(value, limit: int = 60) -> str:
    """A short description of one argument: small plain values as written, tensors by shape and dtype, anything
    larger by its type and size (never its full contents)."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"<tensor {tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}>"
    if isinstance(value, (dict, list, tuple)):
        if len(value) <= 8 and all(
            v is None or type(v) in (bool, int, float, str)
            for v in (value.values() if isinstance(value, dict) else value)
        ):
            text = repr(value)
            if len(text) <= limit:
                return text
        return f"<{type(value).__name__} of {len(value)}>"
    if value is None or type(value) in (bool, int, float, str):
        text = repr(value)
        return text if len(text) <= limit else text[: limit - 3] + "..."
    return f"<{type(value).__name__}>"


def run_check(chk: Check, worker: StudentWorker, ctx, visible: bool, grader_round: Round | None = None) -> Outcome:
    """One check's Outcome: its public round, then, if it passed and `grader_round` is given, the same check on the
    grader's own cases (the public round's output kept as public_round), in the same worker. For a check whose
    module may keep what it is passed: run_part_checks runs the grader's rounds in a worker of their own instead."""
    outcome = run_round(chk, worker, ctx, visible, PUBLIC_ROUND)
    if grader_round is None:
        return outcome
    return with_grader_round(outcome, run_round(chk, worker, ctx, visible, grader_round) if outcome.passed else None)


def with_grader_round(public: Outcome, graders: Outcome | None) -> Outcome:
    """A public check's Outcome from its public round's and, if that passed, its grader's round's (None: not run,
    the check then stands as its public round left it)."""
    return replace(public if graders is None else graders, public_round=public.output)


def run_round(chk: Check, worker: StudentWorker, ctx, visible: bool, round: Round) -> Outcome:
    try:
        with running_as("public" if visible else "hidden", round):  # hidden properties do not shrink
            chk.fn(worker, ctx)
        return Outcome(True)
    except Exception as exc:  # noqa: BLE001 (a verdict on the student, or the grader's error: both reported)
        for candidate in _candidates(exc):
            outcome = _outcome(candidate, chk, visible, grader_cases=not round.public)
            if outcome is not None:
                return Outcome(
                    False, clean(outcome.output, OUTPUT_LIMIT), clean(outcome.note, 4 * OUTPUT_LIMIT), outcome.todo
                )
        return Outcome(False, GRADER_ERROR, "".join(traceback.format_exception(exc))[-3000:])


def run_part_checks(
    part: str,
    number: int,
    checks: list[Check],
    entries: dict[str, Entry],
    start_worker: Callable[[], StudentWorker],
    ctx,
    grader_round: Callable[[Check], Round] | None = None,
    progress: Progress | None = None,
) -> list[CheckResult]:
    """Run `checks` (every one has an entry in `entries`) against one worker of `part`, in order; one result each:
    PartGrade's two phases back to back (a grade of several parts runs every part's first phase before any part's
    second: autograder.grader.engine.grade)."""
    graded = PartGrade(part, number, checks, entries, start_worker, ctx, grader_round, progress)
    graded.public(pause=False)
    return graded.rest()


class PartGrade:
    """One part's grade in two phases. `public()` runs its public checks in the part's worker; `rest()` runs the
    grader's rounds of those checks (in a fresh worker) and then the hidden checks (in another, which holds the
    references of earlier parts), and returns every result. Between the two the part holds no process.

    Everything a worker does to the machine that a later worker could notice (a file's access time, a file in the
    page cache, a process's timing) is a channel no sandbox closes for good; so every worker that is given something
    hidden (the grader's cases, drawn from the hidden seed; the references) runs after every worker whose messages are
    shown at once: after this part's public checks, and, in a grade of several parts, after every part's
    (engine.grade calls every part's `public()` first). A hidden check shows only its property.

    `number` is the part's number (a check's is `number`.`entry.number`, the same in every output, whichever
    checks a run grades), `start_worker()` starts the part's worker (StagingError: the module cannot
    be staged; the worker holds the part's deadline), `ctx` is handed to every check, `grader_round(check)`, given by
    the grader, is the round of cases drawn from its hidden seed that every public check also runs (a public check
    passes when both rounds pass), `progress` is told of each check and training epoch
    (autograder.public.progress; by default nothing is shown). Each check runs until its own limit (Check.timeout,
    from when it starts) or the part's deadline, whichever comes first."""

    def __init__(
        self,
        part: str,
        number: int,
        checks: list[Check],
        entries: dict[str, Entry],
        start_worker: Callable[[], StudentWorker],
        ctx,
        grader_round: Callable[[Check], Round] | None = None,
        progress: Progress | None = None,
    ):
        self.part, self.number, self.checks, self.entries = part, number, checks, entries
        self.start_worker, self.ctx, self.grader_round = start_worker, ctx, grader_round
        self.progress = progress or Progress()
        self.worker: StudentWorker | None = None
        self.results: list[CheckResult] = []
        self.publics: list[tuple[Check, Outcome, float]] = []  # public checks whose grader's round is still to run
        self.over = False  # every check has its result

    def _visible(self, chk: Check) -> bool:
        return self.entries[chk.name].visibility == "public"

    def result(
        self, chk: Check, passed: bool, output: str, seconds: float, note: str = "", todo: str = "", public: str = ""
    ) -> CheckResult:
        entry = self.entries[chk.name]
        return CheckResult(
            self.part,
            chk.name,
            f"{self.number}.{entry.number}",
            chk.description,
            entry.points if passed else 0.0,
            entry.points,
            entry.visibility,
            output,
            seconds,
            note,
            todo,
            public,
        )

    def public(self, pause: bool = True) -> None:
        """The first phase: start the worker and run the public checks; then, if the second phase has work, end the
        worker's processes (StudentWorker.pause) unless `pause` is False (the second phase follows at once: nothing
        runs between the two), else close it."""
        try:
            self.worker = self.start_worker()
        except StagingError as exc:
            self._end([self.result(c, False, str(exc), 0.0) for c in self.checks])
            return
        worker = self.worker
        worker.on_progress = self.progress.epoch
        try:
            if worker.import_error is not None:
                err = worker.import_error
                line = f"{self.part}.py could not be imported: {err.kind}: {err.detail}"
                self._end([self.result(c, False, line, 0.0, err.where) for c in self.checks])
            elif not worker.alive:
                self._end(
                    [self.result(c, False, worker.dead_reason or "the worker did not start", 0.0) for c in self.checks]
                )
            else:
                self._run([c for c in self.checks if self._visible(c)], visible=True)
                if self.publics or any(not self._visible(c) for c in self.checks):
                    if pause:
                        worker.pause()
                else:
                    self._end([])
        except BaseException:
            self._end([])
            raise

    def rest(self, deadline: Deadline | None = None) -> list[CheckResult]:
        """The second phase, within `deadline` (engine.grade gives what the first phase left of the
        part's time; default: the worker's own, when the second phase follows the first at once): the grader's
        rounds of the public checks that passed, then the hidden checks; every result of the part."""
        if self.over:
            return self.results
        worker = self.worker
        try:
            if deadline is not None:
                worker.deadline = deadline
            if self.publics:
                self.results = [
                    *_grader_rounds(self.publics, worker, self.ctx, self.grader_round, self.progress, self.result),
                    *self.results,
                ]
                self.publics = []
            hidden = [c for c in self.checks if not self._visible(c)]
            if hidden and (worker.deadline is None or not worker.deadline.passed):
                worker.serve_hidden()
            self._run(hidden, visible=False)
        finally:
            self._end([])
        return self.results

    def _run(self, checks: list[Check], visible: bool) -> None:
        """Run `checks` (all public or all hidden) in order in the part's worker, restarting it after a crash."""
        worker = self.worker
        for step, chk in enumerate(checks):
            t0 = time.monotonic()
            if worker.deadline is not None and worker.deadline.passed:
                self.results.append(self.result(chk, False, f"not run: {worker.deadline.reached}", 0.0))
                continue
            check_deadline = Deadline.after(limits.LIMITS.seconds(chk.timeout), "the check's time limit was reached")
            self.progress.check(f"{self.number}.{self.entries[chk.name].number}", chk.name, chk.training)
            outcome = run_round(chk, WithinCheck(worker, check_deadline), self.ctx, visible, PUBLIC_ROUND)
            self.progress.check_done()
            seconds = time.monotonic() - t0
            if visible and self.grader_round is not None:  # its result waits for its grader's round (_grader_rounds)
                self.publics.append((chk, outcome, seconds))
            else:
                self.results.append(
                    self.result(chk, outcome.passed, outcome.output, seconds, outcome.note, outcome.todo)
                )
            if chk.training:  # the large heaps; a collection costs about 0.2 s, too much after every check
                release_memory()
            # A crash or a timeout costs this check; the next one (if there is time for it) gets a fresh worker. After
            # the last public check, the second phase starts one anyway.
            if not worker.alive and step + 1 < len(checks) and (worker.deadline is None or not worker.deadline.passed):
                worker.restart()

    def _end(self, results: list[CheckResult]) -> None:
        """Every check has its result (`results` added to those there are): close the worker."""
        self.results.extend(results)
        self.over = True
        if self.worker is not None:
            self.worker.close()


def _grader_rounds(
    publics: list[tuple[Check, Outcome, float]],
    worker: StudentWorker,
    ctx,
    grader_round: Callable[[Check], Round],
    progress: Progress,
    result,
) -> list[CheckResult]:
    """The results of the public checks `publics` ((check, its public round's Outcome, seconds) each, in order), once
    those whose public round passed have run on the grader's cases too: after every public check, in a fresh worker
    (and before the hidden checks, whose worker holds the references of earlier parts), so that nothing the grader's
    round passes to the student's code, drawn from the hidden seed, can be kept and shown in a public check's feedback
    at once. Each runs within what its public round left of the check's time limit."""
    passed = [chk for chk, outcome, _ in publics if outcome.passed]
    if passed and (worker.deadline is None or not worker.deadline.passed):
        worker.restart()
    results = []
    for chk, public, seconds in publics:
        graders = None
        if public.passed:
            t0 = time.monotonic()
            if worker.deadline is not None and worker.deadline.passed:
                graders = Outcome(False, f"not run: {worker.deadline.reached}")
            else:
                progress.step(f"{chk.name}: {GRADER_CASES}")
                left = max(limits.LIMITS.seconds(chk.timeout) - seconds, 0.0)
                graders = run_round(
                    chk,
                    WithinCheck(worker, Deadline.after(left, "the check's time limit was reached")),
                    ctx,
                    True,
                    grader_round(chk),
                )
            seconds += time.monotonic() - t0
            if not worker.alive and chk is not passed[-1] and (worker.deadline is None or not worker.deadline.passed):
                worker.restart()
        outcome = with_grader_round(public, graders)
        results.append(
            result(chk, outcome.passed, outcome.output, seconds, outcome.note, outcome.todo, outcome.public_round)
        )
    return results


def table(report: GradeReport, show_checks: bool = True) -> str:
    """A plain-text table: the total of each part and (optional) one line per check, with each failure's output
    under it; an unwritten TODO is one line however many checks wait for it, and so is a part whose every check
    failed for one reason (a missing module, one that cannot be imported). When the run graded only some of the
    checks (report.full_points), it says what the grade is out of and what the rest of it comes from."""
    lines = []
    totals = report.part_totals()
    for p in PARTS:
        if p.module not in totals:
            continue
        got, out_of = totals[p.module]
        full = report.full_points.get(p.module)
        lines.append(
            f"Part {p.number} {p.module:14s} {got:6.1f} / {out_of:5.1f}"
            + (f"   of {full:g} in the grade" if full is not None and full > out_of else "")
        )
        if show_checks:
            lines += _check_lines([r for r in report.results if r.part == p.module], weigh=bool(report.full_points))
    lines.append(f"{'total':21s} {report.score:6.1f} / {report.max_score:5.1f}   ({report.seconds:.1f} s)")
    lines += _coverage(report)
    return "\n".join(lines)


@dataclass(frozen=True)
class Group:
    """Checks of one part shown as one line (check_groups): those that wait for one unwritten TODO (`todo`), or
    every check of the part when all failed with the same output (`todo` is "": a missing module, one that cannot
    be imported)."""

    results: tuple[CheckResult, ...]
    todo: str = ""

    @property
    def numbers(self) -> str:
        return ", ".join(r.number for r in self.results)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.results)

    @property
    def line(self) -> str:
        """A TODO's line: "TODO corpus_bleu (bleu.py:181): 5 checks wait for it (3.3, 3.4, 3.5, 3.9, 3.10: 6
        points)"."""
        n = len(self.results)
        return (
            f"{self.todo}: {n} check{'s wait' if n > 1 else ' waits'} for it ({self.numbers}: "
            f"{self.max_score:g} point{'s' * (self.max_score != 1)})"
        )


def check_groups(results: list[CheckResult]) -> list[CheckResult | Group]:
    """One part's results as they are shown, in order (`table`, the HTML feedback report): a Group in place of
    the checks it stands for, at the first of them; every other check as it is.

    A part whose checks (more than one) all failed with the same output, none at a TODO, is one Group. Otherwise
    the checks waiting for an unwritten TODO are one Group per TODO, placed where the first of them was. A TODO
    is grouped only when a check's output already shows it (a public check's public round); a check whose output
    does not (a hidden check, the grader's own cases) joins that group, and is otherwise shown as it is: its
    TODO is read from a message its code raised, which a hidden check never shows."""
    if len(results) > 1 and not any(r.passed or r.todo for r in results) and len({r.output for r in results}) == 1:
        return [Group(tuple(results))]
    shown = {r.todo for r in results if r.todo and _shows_todo(r)}
    out: list[CheckResult | Group] = []
    for r in results:
        if r.todo not in shown:
            out.append(r)
        elif not any(isinstance(g, Group) and g.todo == r.todo for g in out):
            out.append(Group(tuple(w for w in results if w.todo == r.todo), r.todo))
    return out


def _shows_todo(r: CheckResult) -> bool:
    """Whether `r`'s output names the TODO it waits for ("... raised NotImplementedError: Part 3 (bleu): ...")."""
    match = TODO_MESSAGE.search(r.output)
    return match is not None and r.todo.split(" (")[0] == f"TODO {match.group('function')}"


def weighing_line(r: CheckResult) -> str:
    """What else of the grade runs the functions of a failed public check, from the public rubric's counts:
    "beam_search is also run by 3 hidden checks (5 points) and 0 training checks of the grade", or "" when the
    rubric does not say."""
    import json
    from pathlib import Path

    try:
        rubric = json.loads((Path(__file__).resolve().parent / "rubric.json").read_text())
        entry = rubric["parts"][r.part]["checks"][r.name]
        functions = ", ".join(entry["functions"])
        hidden, trained = int(entry["hidden_checks"]), int(entry["training_checks"])
        hidden_points, training_points = float(entry["hidden_points"]), float(entry["training_points"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not functions:
        return ""

    def counted(n: int, kind: str, points: float) -> str:
        return f"{n} {kind} check{'s' * (n != 1)}" + (f" worth {points:g} point{'s' * (points != 1)}" if n else "")

    return (
        f"the same function{'s' * (',' in functions)} ({functions}) {'are' if ',' in functions else 'is'} also "
        f"graded by {counted(hidden, 'hidden', hidden_points)} and {counted(trained, 'training', training_points)}"
        " after the deadline"
    )


def _check_lines(results: list[CheckResult], weigh: bool = False) -> list[str]:
    """The lines of one part's checks (see table); `weigh` (a run of the public checks alone): under each failed
    public check, what else of the grade runs its functions (weighing_line)."""
    lines = []
    for item in check_groups(results):
        if isinstance(item, Group) and not item.todo:
            output = item.results[0].output
            lines.append(
                f"    all {len(item.results)} checks FAIL  0.0/{item.max_score:<4.1f} "
                f"{output.splitlines()[0] if output else ''}"
            )
        elif isinstance(item, Group):
            lines.append(f"    {item.line}")
        else:
            mark = "PASS" if item.passed else "FAIL"
            lines.append(
                f"    {item.number:5s} {mark}  {item.score:4.1f}/{item.max_score:<4.1f} {item.name}"
                + ("" if item.passed else f"\n{_indent(item.output, 18)}")
            )
            weighs = weigh and not item.passed and item.visibility == "public" and weighing_line(item)
            if weighs:
                lines.append(" " * 18 + weighs)
    return lines


def _coverage(report: GradeReport) -> list[str]:
    """ "public checks: 50 of the grade's 116 points; 66 more from ...": what a run of some checks covers."""
    graded = report.part_totals()
    if not report.full_points or not graded:
        return []
    out_of = sum(t for _, t in graded.values())
    full = sum(report.full_points.get(part, t) for part, (_, t) in graded.items())
    if full <= out_of:
        return []
    return [
        f"public checks: {out_of:g} of the grade's {full:g} points; {full - out_of:g} more from hidden and "
        "training checks after the deadline"
    ]


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.splitlines()[:12])
