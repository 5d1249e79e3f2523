"""One check's verdict (Outcome) from what the check raised: what a student may see of a failure (the whole message in
a public check's public round; in a hidden check or the grader's round, no text the module could choose) and the case
and traceback kept for the staff; the stub's TODO a check stopped at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.public.checks import Check
from autograder.public.client import StudentError, WorkerDied
from autograder.public.compare import CheckFailed
from autograder.public.golden import GoldenDataError
from shared.parts import TODO_MESSAGE

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
