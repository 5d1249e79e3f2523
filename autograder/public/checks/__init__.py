"""The check registry. A check is a function `check_fn(student, ctx)` that calls recipes in the student's
worker (`student.call(...)`), compares the results with the expected values it computes, and raises CheckFailed
(autograder.public.compare) with a message naming the case. Each part's checks live in a module of their own
(autograder/grader/checks/<part>.py) and register here with @check.

Points and visibility live in the rubric (autograder/grader/rubric.json), not here; a check's docstring's first
line is the property it tests, which is all a hidden check ever shows.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Check:
    part: str
    name: str
    fn: Callable
    timeout: float          # seconds for the whole check (every recipe call of it together)
    training: bool = False  # trains a model on the hidden data (the slow kind)
    # For a training check: ctx -> the time budget of the student's run (it times the reference once per
    # grading run; the engine calls it before any worker of the run exists, the check calls it again for free).
    budget: Callable | None = None

    @property
    def description(self) -> str:
        return (self.fn.__doc__ or self.name).strip().splitlines()[0]


_REGISTRY: dict[str, list[Check]] = {}


def check(timeout: float = 30.0, training: bool = False, budget: Callable | None = None, part: str | None = None):
    """Register a check named after the function, of `part` (default: the part whose module defines it)."""
    def register(fn: Callable) -> Callable:
        owner = part or fn.__module__.rsplit(".", 1)[-1]
        _REGISTRY.setdefault(owner, []).append(Check(owner, fn.__name__, fn, timeout, training, budget))
        return fn
    return register


def registered(part: str) -> list[Check]:
    """The checks of `part` registered so far (by the check modules imported), in definition order."""
    return list(_REGISTRY.get(part, []))


# The visibility of the check running now: the engine sets it (autograder.public.runner.run_check), property
# settings read it (autograder.public.strategies.examples).
_VISIBILITY: ContextVar[str] = ContextVar("visibility", default="public")


def visibility() -> str:
    """"public" or "hidden": the visibility of the check running now ("public" outside any check)."""
    return _VISIBILITY.get()


@contextlib.contextmanager
def running_as(kind: str):
    """Run the block as a check of visibility `kind` ("public" or "hidden")."""
    if kind not in ("public", "hidden"):
        raise ValueError(f"visibility: expected 'public' or 'hidden', got {kind!r}")
    token = _VISIBILITY.set(kind)
    try:
        yield
    finally:
        _VISIBILITY.reset(token)
