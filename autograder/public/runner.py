"""Run one part's checks against a worker and score them: the core the grader's engine and a student's own
`check` share, so both print the same lines for the same check.

For each check in order: give it the part's worker, turn its outcome into a CheckResult (passed, or the one
line a student may see: the check's message for a public check, only its property for a hidden one), restart
the worker after a crash, and stop at the part's deadline. What is graded (which checks, their points and
visibility, the worker) is the caller's choice: the grader's engine for a grade, the public checker for
a student's working copy.

A check's outcome and what a student sees of it: autograder.public.outcomes; the results and the report:
autograder.public.grade_report; the table `check` and `grade` print: autograder.public.score_table.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import replace

from autograder.public import limits
from autograder.public.checks import PUBLIC_ROUND, Check, Round, running_as
from autograder.public.client import StudentError, StudentWorker
from autograder.public.grade_report import CheckResult, Entry
from autograder.public.limits import Deadline
from autograder.public.outcomes import GRADER_CASES, Outcome, _candidates, _outcome
from autograder.public.progress import Progress
from autograder.public.staging import StagingError
from autograder.worker.memory import release_memory
from autograder.worker.protocol import clean

OUTPUT_LIMIT = 2000  # characters of feedback per check
GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"


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
