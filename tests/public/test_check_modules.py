"""What the check modules (autograder/public/checks/ and autograder/grader/checks/, packages included) may hold, read
with `ast`: every tolerance is a named one of autograder/public/tolerances.py (or, used by hidden checks alone, of
autograder/grader/tolerances.py), every hypothesis strategy a named one of autograder/public/strategies.py or
autograder/grader/strategies.py. And the rule of hypothesis those strategies'
docstring states, that a property's cases follow its decorators as well as its body, holds for the installed
release."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK_ZONES = ("autograder/public/checks", "autograder/grader/checks")
# A name that holds a tolerance's number: RTOL, atol, TOL, STEP_TOL, tol_float32, ...
TOLERANCE_NAME = re.compile(r"(?i)^(?:[ra]?tol|.*_[ra]?tol)(?:_.*)?$")


def check_modules() -> list[Path]:
    modules = [path for zone in CHECK_ZONES for path in sorted((ROOT / zone).rglob("*.py"))]
    assert len(modules) >= 14, modules  # every part's public and hidden checks
    return modules


def _holds_a_number(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        for n in ast.walk(node)
    )


def _called(node: ast.Call) -> str | None:
    return getattr(node.func, "id", getattr(node.func, "attr", None))


def literal_tolerances(source: str) -> list[int]:
    """Lines of `source` where a number is given as a tolerance: a keyword rtol=, atol= or tolerance= whose value holds
    a literal number (expect_tensor, torch.allclose, dict(...)), an argument of Tolerance(...) holding one, or a name
    of a tolerance (RTOL, ATOL, TOL, STEP_TOL, tol, ...) bound to an expression holding one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            if any(k.arg in ("rtol", "atol", "tolerance") and _holds_a_number(k.value) for k in node.keywords) or (
                _called(node) == "Tolerance" and _holds_a_number(node)
            ):
                found.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            if any(TOLERANCE_NAME.match(name) for name in names) and _holds_a_number(node.value):
                found.append(node.lineno)
    return sorted(set(found))


def test_every_tolerance_of_a_check_is_a_named_one():
    """A check compares within a named Tolerance of autograder/public/tolerances.py or autograder/grader/tolerances.py
    (EXACT for an input left unchanged), never within numbers of its own: every tolerance of grading is named once,
    with why it has its size."""
    found = {path.relative_to(ROOT).as_posix(): literal_tolerances(path.read_text()) for path in check_modules()}
    assert not any(found.values()), {path: lines for path, lines in found.items() if lines}


@pytest.mark.parametrize(
    "source, lines",
    [
        ('expect_tensor("x", a, b, rtol=0, atol=0, case=c)\n', [1]),
        ("expect_tensor('x', a, b,\n    rtol=1e-5,\n    atol=1e-6)\n", [1]),
        ("ok = torch.allclose(a, b, rtol=1e-4, atol=1e-4)\n", [1]),
        ("CLOSE = Tolerance(1e-4, 1e-5, float64=TIGHT)\n", [1]),
        ("TIGHT = dict(rtol=1e-9, atol=1e-10)\n", [1]),
        ("RTOL, ATOL = 1e-7, 1e-9\n", [1]),
        ("def f(w):\n    tol = 1e-9 if w.dtype == torch.float64 else 1e-5\n", [2]),
        ("expect_tensor('x', a, b, tolerance=Tolerance(0, 1e-12))\n", [1]),
        ('expect_tensor("x", a, b, tolerance=EXACT, case=c)\n', []),
        ("tol = MODEL_TOL.for_dtypes(F64, got.dtype)\nok = tol.allclose(a, b)\n", []),
        ("tolerance = 5 * math.sqrt(p * (1 - p) / n) + 1e-3\n", []),  # a statistical bound, computed where it is drawn
        ("STEPS = examples(6)\nMOVES = 1e-2\n", []),
    ],
)
def test_a_literal_tolerance_is_found(source, lines):
    assert literal_tolerances(source) == lines


def _strategy_modules(tree: ast.Module) -> set[str]:
    """The names `tree` binds to hypothesis.strategies (`from hypothesis import strategies as st`), and `st`, its
    usual name, in any case."""
    names = {"st"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "hypothesis":
            names |= {a.asname or a.name for a in node.names if a.name == "strategies"}
        elif isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "hypothesis.strategies" and a.asname}
    return names


def inline_strategies(source: str) -> list[int]:
    """Lines of `source` that build a hypothesis strategy: a use of hypothesis.strategies (`st.integers(1, 4)`,
    `st.tuples(...)`, ...) but `st.data()` and the strategies a property draws from it (`data.draw(st.permutations(x))`),
    and every import of names from hypothesis.strategies."""
    tree = ast.parse(source)
    modules = _strategy_modules(tree)
    drawn = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "draw"
        for arg in node.args
        for n in ast.walk(arg)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "hypothesis.strategies":
            found.append(node.lineno)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr != "data"
            and id(node) not in drawn
        ):
            found.append(node.lineno)
    return sorted(set(found))


def test_no_check_module_builds_a_strategy_of_its_own():
    """Every strategy a check draws from is named in autograder/public/strategies.py (or, hidden checks' only,
    autograder/grader/strategies.py), for what it draws: a check module holds none but st.data() and its draws."""
    found = {path.relative_to(ROOT).as_posix(): inline_strategies(path.read_text()) for path in check_modules()}
    assert not any(found.values()), {path: lines for path, lines in found.items() if lines}


@pytest.mark.parametrize(
    "source, lines",
    [
        ("from hypothesis import strategies as st\n@given(toy_cases, st.integers(1, 6))\ndef f(): pass\n", [2]),
        ("import hypothesis.strategies as hs\nx = hs.one_of(hs.none(), hs.integers(1, 4))\n", [2]),
        ("from hypothesis.strategies import integers\n", [1]),
        ("from hypothesis import strategies as st\nwidths = st.integers\n", [2]),
        ("from hypothesis import strategies as st\n@given(toy_cases, beam_widths)\ndef f(): pass\n", []),
        (
            "from hypothesis import strategies as st\n@given(corpora, st.data())\ndef f(corpus, data):\n"
            "    order = data.draw(st.permutations(range(3)))\n",
            [],
        ),
    ],
)
def test_an_inline_strategy_is_found(source, lines):
    assert inline_strategies(source) == lines


PROPERTIES = """
from hypothesis import given, strategies as st

WIDTHS = st.integers(1, 6)


def check():
    @given({given})
    def prop(k):
        return k{comment}

    return prop
"""


def _digest(folder: Path, given: str, comment: str = "") -> bytes:
    """hypothesis's digest of the property `prop` of a module PROPERTIES makes (`given`: its @given argument)."""
    from hypothesis.internal.reflection import function_digest

    path = folder / f"properties_{len(list(folder.iterdir()))}.py"
    path.write_text(PROPERTIES.format(given=given, comment=comment))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return function_digest(module.check().hypothesis.inner_test)


def test_a_propertys_cases_follow_its_decorators_and_not_its_comments(tmp_path):
    """A derandomised property draws from the digest of its source: for a property inside its check (indented, as
    every property of the kit is) hypothesis keeps the decorators in it, so naming a strategy on the @given line
    changes the cases even with the same expression, while a comment does not (autograder/public/strategies.py)."""
    inline = _digest(tmp_path, "st.integers(1, 6)")
    assert _digest(tmp_path, "WIDTHS") != inline
    assert _digest(tmp_path, "st.integers(1, 6)", comment="  # a comment") == inline
