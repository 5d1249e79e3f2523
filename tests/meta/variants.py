"""Submissions made from the reference by one textual edit: buggy variants (mutants) that must lose
points in their part, and correct implementations written differently that must keep full marks.

Each part's variants live in tests/meta/variants_<part>.py as a list VARIANTS of Variant.
"""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.grader.sample import replace_once
from shared.parts import MODULES

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Variant:
    part: str
    name: str
    old: str  # a snippet of solutions/<part>.py that occurs exactly once
    new: str  # what replaces it
    correct: bool  # True: a correct alternative (full marks); False: a realistic bug (must lose points)
    why: str = ""
    training: bool = False  # a bug only the training check catches (so its test must run training)
    # A wrong convention (BLEU's zeros, its closest-length ties): the one check that tests it, the only one it may fail.
    convention: str = ""

    def apply(self, text: str) -> str:
        return replace_once(text, self.old, self.new, f"variant {self.part}/{self.name}")


def all_variants() -> list[Variant]:
    found = []
    for part in MODULES:
        try:
            module = importlib.import_module(f"tests.meta.variants_{part}")
        except ModuleNotFoundError:
            continue
        found.extend(module.VARIANTS)
    return found


def make_submission(folder: Path, variant: Variant | None = None, source: Path = ROOT / "solutions") -> Path:
    """A submission folder with every module of `source`, one of them edited by `variant`."""
    folder.mkdir(parents=True, exist_ok=True)
    for part in MODULES:
        shutil.copy(source / f"{part}.py", folder / f"{part}.py")
    if variant is not None:
        path = folder / f"{variant.part}.py"
        path.write_text(variant.apply(path.read_text()))
    return folder
