"""The checks of every part: one module per part for its property checks, and its training check declared in
autograder/grader/training/; each registers with autograder.public.checks.check."""

from __future__ import annotations

import importlib

from autograder.grader import rubric as rubric_mod
from autograder.grader import training  # noqa: F401 (registers the training checks)
from autograder.public.checks import Check, registered
from shared.parts import MODULES


def checks_of(part: str) -> list[Check]:
    """The checks of one part, in the rubric's order: the order they run in and are numbered by. A check the
    rubric does not list comes last (it is never graded; tests/grader/test_grader.py fails on it)."""
    importlib.import_module(f"autograder.grader.checks.{part}")
    order = list(rubric_mod.load().get(part, {}))
    return sorted(registered(part), key=lambda c: order.index(c.name) if c.name in order else len(order))


def all_checks() -> dict[str, list[Check]]:
    return {part: checks_of(part) for part in MODULES}
