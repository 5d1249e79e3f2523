"""Student stubs: generated from the solutions without drift, marker lint, and the generator itself."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from instructor import stubs
from instructor.__main__ import main
from shared.parts import BY_MODULE, MODULES

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS, ASSIGNMENTS = ROOT / "solutions", ROOT / "assignments"
PRESENT = [m for m in MODULES if (SOLUTIONS / f"{m}.py").exists()]


def todo_raises(text: str) -> list[tuple[str, ast.Raise]]:
    """(qualified name of the enclosing function, node) of every generated TODO raise in `text`."""
    found = []

    def visit(node: ast.AST, names: list[str], function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = names + [child.name]
                visit(child, inner, function if isinstance(child, ast.ClassDef) else ".".join(inner))
                continue
            if (
                isinstance(child, ast.Raise)
                and isinstance(child.exc, ast.Call)
                and getattr(child.exc.func, "id", None) == "NotImplementedError"
                and child.exc.args
                and str(getattr(child.exc.args[0], "value", "")).startswith("Part ")
            ):
                found.append((function, child))
            visit(child, names, function)

    visit(ast.parse(text), [], None)
    return found


# (a) drift


@pytest.mark.parametrize("module", PRESENT)
def test_committed_stub_is_generated(module):
    expected = stubs.strip_solutions((SOLUTIONS / f"{module}.py").read_text(encoding="utf-8"), module)
    committed = ASSIGNMENTS / f"{module}.py"
    assert committed.exists(), f"assignments/{module}.py is missing: run `python -m instructor stubs`"
    if committed.read_text(encoding="utf-8") != expected:
        pytest.fail(
            "stub drifted from its solution; run `python -m instructor stubs`\n"
            + stubs.stub_diff(module, expected, ASSIGNMENTS),
            pytrace=False,
        )


def test_cli_check_passes_on_the_repository():
    result = subprocess.run(
        [sys.executable, "-m", "instructor", "stubs", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


# (b) lint of the real files


def test_lint_passes_on_solutions_and_stubs():
    errors = stubs.lint_all(SOLUTIONS, ASSIGNMENTS)
    assert not errors, "\n".join(errors)


# (c) stubs import, and every region became a named raise


@pytest.mark.parametrize("module", PRESENT)
def test_stub_imports_and_names_every_todo(module):
    part = BY_MODULE[module].number
    assert (ASSIGNMENTS / f"{module}.py").exists(), f"assignments/{module}.py is missing"
    solution = (SOLUTIONS / f"{module}.py").read_text(encoding="utf-8")
    stub = (ASSIGNMENTS / f"{module}.py").read_text(encoding="utf-8")
    imported = importlib.import_module(f"assignments.{module}")

    raises = todo_raises(stub)
    regions = sum("BEGIN SOLUTION" in line for line in solution.splitlines())
    assert len(raises) == regions, "every solution region must become exactly one raise"
    lines = stub.splitlines()
    for function, node in raises:
        assert function is not None, f"line {node.lineno}: TODO outside a function"
        assert node.exc.args[0].value == f"Part {part} ({module}): {function} is not implemented yet"
        assert lines[node.lineno - 2].strip() == f"# TODO (Part {part}): implement {function}"

    # Call the TODOs whose body starts with the raise: any arguments will do, the raise comes first.
    for function, node in raises:
        obj = imported
        for name in function.split("."):
            obj = getattr(obj, name, None)
        body = [
            s
            for s in _definition(stub, function).body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if obj is None or not callable(obj) or body[0].lineno != node.lineno:
            continue  # a nested function, or given code runs before the raise
        required = [
            p
            for p in inspect.signature(obj).parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        positional = [None for p in required if p.kind != p.KEYWORD_ONLY]
        keywords = {p.name: None for p in required if p.kind == p.KEYWORD_ONLY}
        with pytest.raises(NotImplementedError, match=rf"^Part {part} \({module}\): {function} is not"):
            obj(*positional, **keywords)


def _definition(text: str, qualname: str) -> ast.AST:
    """The def node of `qualname` (e.g. `ShowTellRNN.forward`) in `text`."""
    node = ast.parse(text)
    for name in qualname.split("."):
        node = next(n for n in node.body if getattr(n, "name", None) == name)
    return node


# (d) the lint on synthetic texts


def lint(text: str) -> list[str]:
    """Lint a dedented synthetic solution named s.py."""
    return stubs.lint_solution(textwrap.dedent(text), "s.py")


def reported(errors: list[str], line: int, words: str) -> bool:
    """Whether some error points at s.py:`line` and contains `words`."""
    return any(e.startswith(f"s.py:{line}:") and words in e for e in errors)


def test_lint_accepts_a_clean_solution():
    assert lint(SAMPLE) == []
    assert stubs.lint_stub(stubs.strip_solutions(SAMPLE, "bleu"), "s.py") == []


def test_lint_reports_begin_without_end():
    errors = lint("""\
        def f():
            ### BEGIN SOLUTION
            return 1
        """)
    assert reported(errors, 2, "BEGIN SOLUTION without END")


def test_lint_reports_nested_begin():
    errors = lint("""\
        def f():
            ### BEGIN SOLUTION
            x = 1
            ### BEGIN SOLUTION
            return x
            ### END SOLUTION
            ### END SOLUTION
        """)
    assert reported(errors, 4, "nested BEGIN SOLUTION")


def test_lint_reports_end_without_begin():
    errors = lint("""\
        def f():
            return 1
            ### END SOLUTION
        """)
    assert reported(errors, 3, "END SOLUTION without BEGIN")


def test_lint_reports_marker_in_a_string():
    errors = lint('''\
        def f():
            """Docstring.

            Do not write ### END SOLUTION here.
            """
            ### BEGIN SOLUTION
            return "### BEGIN SOLUTION"
            ### END SOLUTION
        ''')
    assert reported(errors, 4, "'END SOLUTION' inside a string literal")
    assert reported(errors, 7, "'BEGIN SOLUTION' inside a string literal")


def test_lint_reports_marker_trailing_code_or_with_extra_words():
    errors = lint("""\
        def f():
            x = 1  ### BEGIN SOLUTION
            return x
            ### END SOLUTION (part a)
        """)
    assert reported(errors, 2, "trails code")
    assert reported(errors, 4, "must be alone")


def test_lint_reports_region_spanning_two_functions():
    errors = lint("""\
        class A:
            def f(self):
                ### BEGIN SOLUTION
                return 1

            def g(self):
                return 2
                ### END SOLUTION
        """)
    assert reported(errors, 3, "spans more than one function: line 6 is outside A.f")


def test_lint_reports_region_outside_functions():
    assert reported(lint("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"), 1, "not inside a function")


def test_lint_accepts_two_regions_in_one_function_and_a_nested_helper():
    assert (
        lint("""\
        def f(x):
            ### BEGIN SOLUTION
            def helper(y):
                return y
            ### END SOLUTION
            x = x + 1
            ### BEGIN SOLUTION
            return helper(x)
            ### END SOLUTION
        """)
        == []
    )


def test_lint_stub_reports_leftover_markers_and_syntax_errors():
    errors = stubs.lint_stub("def f():\n    ### END SOLUTION\n    # BEGIN HIDDEN TESTS\n    pass\n", "a.py")
    assert errors == ["a.py:2: leftover marker 'END SOLUTION'", "a.py:3: leftover marker 'BEGIN HIDDEN TESTS'"]
    assert stubs.lint_stub("def f(:\n", "a.py") == ["a.py:1: does not parse: invalid syntax"]


# (e) the generator on a synthetic module

SAMPLE = '''\
"""Sample module."""
import math


class Model:
    """A model."""

    def forward(self, x):
        """Forward."""
        y = x + 1
        ### BEGIN SOLUTION
        return math.sqrt(y)
        ### END SOLUTION

    def given(self):
        """Given."""
        return 1


def score(a, b):
    """Score."""
    ### BEGIN SOLUTION
    if a:
        return b
    ### END SOLUTION
    return 0
'''

SAMPLE_STUB = '''\
"""Sample module."""
# Generated from the reference bleu.py by `python -m instructor stubs`; do not edit by hand.
import math


class Model:
    """A model."""

    def forward(self, x):
        """Forward."""
        y = x + 1
        # TODO (Part 3): implement Model.forward
        raise NotImplementedError("Part 3 (bleu): Model.forward is not implemented yet")

    def given(self):
        """Given."""
        return 1


def score(a, b):
    """Score."""
    # TODO (Part 3): implement score
    raise NotImplementedError("Part 3 (bleu): score is not implemented yet")
    return 0
'''


def test_strip_solutions_exact_output():
    assert stubs.strip_solutions(SAMPLE, "bleu") == SAMPLE_STUB


def test_strip_solutions_drops_hidden_tests_and_keeps_plain_modules():
    text = "x = 1\n### BEGIN HIDDEN TESTS\nassert x == 1\n### END HIDDEN TESTS\n"
    header = "# Generated from the reference bleu.py by `python -m instructor stubs`; do not edit by hand.\n"
    assert stubs.strip_solutions(text, "bleu") == header + "x = 1\n"
    # nbgrader would replace a whole solution cell without regions; a module without TODOs stays as is.
    assert stubs.strip_solutions('"""Doc."""\nx = 1\n', "bleu") == '"""Doc."""\n' + header + "x = 1\n"


def test_strip_solutions_fails_loudly():
    with pytest.raises(RuntimeError, match="nested"):
        stubs.strip_solutions("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n", "bleu")
    with pytest.raises(ValueError, match="unknown module"):
        stubs.strip_solutions(SAMPLE, "not_a_part")


# Drift and lint fail on a broken synthetic project (never on the real files).


def test_drift_and_lint_fail_when_broken(tmp_path, capsys):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "assignments").mkdir()
    (tmp_path / "solutions" / "bleu.py").write_text(SAMPLE)
    root = ["--root", str(tmp_path)]

    assert main(["stubs", *root]) == 0
    assert (tmp_path / "assignments" / "bleu.py").read_text() == SAMPLE_STUB
    assert stubs.check_drift(tmp_path / "solutions", tmp_path / "assignments") == []
    assert main(["stubs", "--check", *root]) == 0
    assert main(["lint", *root]) == 0

    # A hand edit of the stub is drift; --check names the file and shows the diff.
    stub = tmp_path / "assignments" / "bleu.py"
    stub.write_text(SAMPLE_STUB.replace("return 1", "return 2"))
    assert stubs.check_drift(tmp_path / "solutions", tmp_path / "assignments") == ["bleu"]
    capsys.readouterr()
    assert main(["stubs", "--check", *root]) == 1
    out = capsys.readouterr().out
    assert "assignments/bleu.py differs from its generated stub" in out
    assert "-        return 2\n+        return 1" in out

    # A marker left in the stub and a broken solution both fail the lint.
    stub.write_text(SAMPLE)
    (tmp_path / "solutions" / "bleu.py").write_text(SAMPLE.replace("        ### END SOLUTION\n", "", 1))
    assert main(["lint", *root]) == 1
    out = capsys.readouterr().out
    assert "solutions/bleu.py:21: nested BEGIN SOLUTION" in out
    assert "assignments/bleu.py:11: leftover marker 'BEGIN SOLUTION'" in out
