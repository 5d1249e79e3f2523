"""The check registry. A check is a function `check_fn(student, ctx)` that calls recipes in the student's
worker (`student.call(...)`), compares the results with the expected values it computes, and raises CheckFailed
(autograder.public.compare) with a message naming the case. Each part's checks live in a module of their own, or in
a package of modules (the public ones: autograder/public/checks/<part>.py or autograder/public/checks/<part>/, the
hidden ones under autograder/grader/checks/), and register here with @check.

Points and visibility live in the rubric (the public checks': autograder/public/rubric.json), not here; a check's docstring's first
line is the property it tests, which is all a hidden check ever shows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from autograder.public.limits import LIMITS


@dataclass(frozen=True)
class Check:
    part: str
    name: str
    fn: Callable
    timeout: float  # seconds for the whole check (every recipe call of it together), x LIMITS.scale
    training: bool = False  # trains a model on the hidden data (the slow kind), or grades such a run's reply

    @property
    def description(self) -> str:
        return (self.fn.__doc__ or self.name).strip().splitlines()[0]


_REGISTRY: dict[str, list[Check]] = {}


def part_of(module: str) -> str:
    """The part whose checks `module` defines: the name after `.checks.` (autograder.public.checks.bleu,
    autograder.public.checks.bleu.counts and autograder.grader.checks.bleu are all "bleu"), or, outside a checks
    package, the module's own name."""
    return module.split(".checks.", 1)[1].split(".", 1)[0] if ".checks." in module else module.rsplit(".", 1)[-1]


def check(timeout: float | None = None, training: bool = False, part: str | None = None):
    """Register a check named after the function, of `part` (default: the part whose module defines it, part_of),
    with a limit of `timeout` seconds (default: LIMITS.check, autograder.public.limits). A check runs within its
    part's time limit, so a longer limit could never apply: it is refused here."""
    seconds = LIMITS.check if timeout is None else timeout

    def register(fn: Callable) -> Callable:
        owner = part or part_of(fn.__module__)
        if not 0 < seconds <= LIMITS.part:
            raise ValueError(
                f"check {owner}.{fn.__name__}: timeout={seconds:g} s; expected more than 0 and at most "
                f"the part's time limit ({LIMITS.part:g} s)"
            )
        _REGISTRY.setdefault(owner, []).append(Check(owner, fn.__name__, fn, seconds, training))
        return fn

    return register


def registered(part: str) -> list[Check]:
    """The checks of `part` registered so far (by the check modules imported), in definition order."""
    return list(_REGISTRY.get(part, []))


@dataclass(frozen=True)
class Round:
    """The cases a check runs on now.

    The public round (seed None): the check's own cases, fixed or derandomised, the same on every machine; what a
    student's `check` runs, with expected values from public oracles, closed forms or the golden data
    (autograder/public/golden). The grader's round (grader only, for public checks): cases drawn from `seed`,
    derived from the hidden test secret, which students cannot know, so a module that returns stored answers for the
    public cases fails it; expected values from the oracle or, where only the reference knows them, from
    `reference(part)`, the grader's reference module of a part. It runs after every public check of the part, in a
    worker of its own (autograder.public.runner.run_part_checks), and shows no message of the student's code: its cases
    are not the student's to see."""

    seed: int | None = None
    reference: Callable[[str], object] | None = None

    @property
    def public(self) -> bool:
        return self.seed is None


PUBLIC_ROUND = Round()
# The visibility of the check running now and its round: the engine sets them (autograder.public.runner.run_round);
# property settings read them (autograder.public.strategies.examples), and so do checks with fixed cases.
_VISIBILITY: ContextVar[str] = ContextVar("visibility", default="public")
_ROUND: ContextVar[Round] = ContextVar("round", default=PUBLIC_ROUND)


def visibility() -> str:
    """ "public" or "hidden": the visibility of the check running now ("public" outside any check)."""
    return _VISIBILITY.get()


def current_round() -> Round:
    """The round the check running now is in (the public round outside any check)."""
    return _ROUND.get()


@contextlib.contextmanager
def running_as(kind: str, round: Round = PUBLIC_ROUND):
    """Run the block as a check of visibility `kind` ("public" or "hidden"), in `round`."""
    if kind not in ("public", "hidden"):
        raise ValueError(f"visibility: expected 'public' or 'hidden', got {kind!r}")
    tokens = _VISIBILITY.set(kind), _ROUND.set(round)
    try:
        yield
    finally:
        _VISIBILITY.reset(tokens[0])
        _ROUND.reset(tokens[1])
