"""docs/grader.md's "The path of a submission" names the functions a grade goes through: each name resolves in the
kit, so the map cannot drift from the code without this failing."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import autograder

ROOT = Path(__file__).resolve().parents[1]
# What the map writes that is not a name of the kit: a check's function and the worker passed to it, a file name.
NOT_NAMES = {"chk.fn", "worker.call", "results.json"}
# A name of the map: zone/module[.py][: or .]attribute[()], module.attribute, Class.method, each followed by "()" or
# not; a word with neither a dot nor a slash is prose.
NAME = re.compile(
    r"(?<![\w/<])((?:grader|public|worker)/[a-z_]+(?:\.py)?(?::\s*[a-z_]+\(\))?(?:\.[A-Za-z_]\w*)*"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?"
)


def the_map() -> str:
    text = (ROOT / "docs" / "grader.md").read_text()
    section = text.split("## The path of a submission", 1)[1]
    return section.split("```", 2)[1]


def modules() -> dict[str, object]:
    """Every module of the autograder package by its dotted path under autograder (grader.engine, ...)."""
    found = {}
    for info in pkgutil.walk_packages(autograder.__path__, "autograder."):
        if info.name.startswith("autograder.worker.recipes.") or ".hidden" in info.name:
            continue
        found[info.name.removeprefix("autograder.")] = importlib.import_module(info.name)
    return found


def resolve(name: str, found: dict[str, object]) -> object | None:
    """The object `name` stands for, or None."""
    name = re.sub(r"\.py\b", "", re.sub(r":\s*", ".", name)).replace("/", ".").removesuffix("()")
    parts = name.split(".")
    for i in range(len(parts), 0, -1):  # the longest module path first: grader.engine.grade
        head = ".".join(parts[:i])
        owners = [m for key, m in found.items() if key == head or key.endswith("." + head)]
        for owner in owners:
            obj = owner
            for attribute in parts[i:]:
                obj = getattr(obj, attribute, None)
            if obj is not None:
                return obj
    # A class's method, named by the class alone (Worker.pause): a class of that name defined in the kit
    classes = [getattr(m, parts[0]) for m in found.values() if inspect.isclass(getattr(m, parts[0], None))]
    for obj in classes:
        for attribute in parts[1:]:
            obj = getattr(obj, attribute, None)
        if obj is not None:
            return obj
    return None


def test_every_name_on_the_path_of_a_submission_is_in_the_kit():
    found = modules()
    names = sorted({m.group(1) for m in NAME.finditer(the_map())} - NOT_NAMES)
    assert len(names) >= 15, names
    missing = [name for name in names if resolve(name, found) is None]
    assert not missing, f"docs/grader.md, The path of a submission, names what the kit does not have: {missing}"


@pytest.mark.parametrize("name", ["grader/engine.grade_everything", "Worker.pause_forever", "runner.no_such_thing"])
def test_a_name_the_kit_does_not_have_is_found(name):
    assert resolve(name, modules()) is None
