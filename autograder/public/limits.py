"""Every time limit of grading, in one configuration object, and the deadlines a grade passes down.

    limit        default  what it bounds
    part          300 s   one part: its worker's start-ups and every check of it, training included
    check          30 s   one check, every recipe call of it together (the default of @check(timeout=...));
                          never above `part` (autograder.public.checks.check refuses it at registration)
    hidden_check   60 s   a hidden check that draws more and larger cases than its public twin (BLEU's longer
                          corpora, StyleNet's larger cells)
    hidden_styled_check 120 s  StyleNet's hidden check of the styled update over many optimizers, styles and sizes
    call           20 s   one recipe call (the default of student.call(..., timeout=...))
    bleu_call      10 s   one recipe call of Part 3's (bleu) public checks: each scores a handful of short captions
    styled_steps_call 60 s  one call of stylenet.styled_steps, Part 7's (stylenet) styled updates in its public checks
    startup        60 s   a worker's start: importing torch and the student's module
    submission   3600 s   one submission, every part together, in `batch` and on Gradescope
                          ($CAPTIONKIT_SUBMISSION_TIME_LIMIT)
    cpu           900 s   the worker's CPU seconds (RLIMIT_CPU): a backstop behind the wall-clock limits
    scale           1     multiplies every wall-clock limit above ($CAPTIONKIT_TIME_SCALE): 1 on a grading machine,
                          more where many grading runs share few cores (the kit's own tests set 4)
    budget_factor   3     a training check's budget: budget_factor x the reference's time, measured in the same
    budget_allowance 15 s grading run when a run needs it, plus budget_allowance
                          (autograder.grader.context.GradingContext.budget; autograder.grader.training.run_within_budget)
    retrieval      20 s   how long the student's retrieval_scores may run the trained model in Part 1's training run
                          (the reference takes under 1 s); timed inside the worker, not scaled
                          (autograder.grader.training.retrieval_file)
    training      600 s   one training run of the student handout's `check --train`, which has no reference to time
                          (the grader's budget above); generous: a run that fits it may still overrun the grader's
                          (autograder.public.checker)

Not knobs, and so not here: the fixed waits of the grader's own machinery, which bound no student code and are not
scaled. Such are, in autograder/public/client/zygote.py, how long the part's zygote, when it answered before, may take to
fork a worker (FORK_SECONDS, 15 s, never past the worker's start-up deadline) and to kill one and collect its
status (KILL_SECONDS, 5 s); a zygote that does not answer in time is ended.

A limit becomes a Deadline (an instant of time.monotonic() and the words that say which limit it was) where it
starts: the engine makes the part's when the part starts, the runner the check's when the check starts, and a call
its own. Each is passed down with what it bounds (the worker holds its part's; every call gets the check's), and a
call waits for the earliest of them; the message of the one reached is what the student reads.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import overload


@dataclass(frozen=True)
class TimeLimits:
    """The time limits of grading in seconds (the table above); `seconds(limit)` scales a wall-clock one."""

    part: float = 300.0
    check: float = 30.0
    hidden_check: float = 60.0
    hidden_styled_check: float = 120.0
    call: float = 20.0
    startup: float = 60.0
    submission: float = 3600.0
    cpu: int = 900
    scale: float = 1.0
    budget_factor: float = 3.0
    budget_allowance: float = 15.0
    bleu_call: float = 10.0
    styled_steps_call: float = 60.0
    retrieval: float = 20.0
    training: float = 600.0

    def __post_init__(self):
        # Every field: a number of seconds (a factor for scale and budget_factor); only the allowance may be 0.
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            zero_allowed = field.name == "budget_allowance"
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not (value >= 0 if zero_allowed else value > 0):
                raise ValueError(
                    f"time limits: {field.name} must be a number "
                    f"{'of 0 or more' if zero_allowed else 'above 0'}, got {value!r}"
                )

    @classmethod
    def from_environment(cls, environ=os.environ) -> TimeLimits:
        """The defaults, overridden by $CAPTIONKIT_TIME_SCALE and $CAPTIONKIT_SUBMISSION_TIME_LIMIT where set."""
        overrides = {}
        for variable, name in (("CAPTIONKIT_TIME_SCALE", "scale"), ("CAPTIONKIT_SUBMISSION_TIME_LIMIT", "submission")):
            if environ.get(variable, "").strip():
                try:
                    overrides[name] = float(environ[variable])
                except ValueError:
                    raise ValueError(
                        f"${variable}: expected a number of seconds{' (a factor)' if name == 'scale' else ''}"
                        f", got {environ[variable]!r}"
                    ) from None
        return cls(**overrides)  # type: ignore[arg-type]  # both fields it may override are floats

    def seconds(self, limit: float) -> float:
        """Wall-clock seconds a limit of `limit` seconds allows on this machine (x scale)."""
        return limit * self.scale


# The limits every grade and check reads, at the time it reads them (tests replace this object).
LIMITS = TimeLimits.from_environment()

# What a worker's user may keep in the places it can write (its folder, which is its HOME and TMPDIR, and the machine's
# temporary folders), all together: the size of the one private tmpfs that holds them where the grader may make a
# mount namespace, else the watchdog's limit on the sandbox user's files there (autograder.public.client.disk.disk_usage).
WORKER_DISK_BYTES = 256 * 1024**2
WORKER_DISK_FILES = 4096
# How deep the worker's folders may nest there: the watchdog looks no deeper (a deeper folder ends the worker as one
# over its disk limit). Nothing a part needs nests more than a few levels.
WORKER_FOLDER_DEPTH = 64


@dataclass(frozen=True)
class Deadline:
    """The instant (time.monotonic()) by which something must end, and what a student reads when it is reached."""

    at: float
    reached: str  # "the part's time limit was reached", "timed out after 20 s", ...

    @classmethod
    def after(cls, seconds: float, reached: str) -> Deadline:
        return cls(time.monotonic() + seconds, reached)

    def left(self) -> float:
        """Seconds until the deadline (0 or less once it has passed)."""
        return self.at - time.monotonic()

    @property
    def passed(self) -> bool:
        return self.left() <= 0


def part_deadline(ends_by: float | None = None) -> Deadline:
    """The deadline of a part starting now: LIMITS.part from now, or `ends_by` (a time.monotonic() instant: the end
    of the submission's time) where that comes first; its message names the limit that ends the part."""
    at = time.monotonic() + LIMITS.seconds(LIMITS.part)
    if ends_by is not None and ends_by < at:
        return Deadline(ends_by, "the submission's time limit was reached")
    return Deadline(at, "the part's time limit was reached")


@overload
def earliest(first: Deadline, /, *deadlines: Deadline | None) -> Deadline: ...


@overload
def earliest(*deadlines: Deadline | None) -> Deadline | None: ...


def earliest(*deadlines: Deadline | None) -> Deadline | None:
    """The first of `deadlines` to come (None ones ignored; None if all are)."""
    given = [d for d in deadlines if d is not None]
    return min(given, key=lambda d: d.at) if given else None
