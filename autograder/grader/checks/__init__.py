"""The checks of every part, one module per part; each registers its checks with autograder.public.checks.check."""
from __future__ import annotations

import importlib

from autograder.public.checks import Check, registered
from shared.parts import MODULES


def checks_of(part: str) -> list[Check]:
    """The checks of one part, in definition order."""
    importlib.import_module(f"autograder.grader.checks.{part}")
    return registered(part)


def all_checks() -> dict[str, list[Check]]:
    return {part: checks_of(part) for part in MODULES}
