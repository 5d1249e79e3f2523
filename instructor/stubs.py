"""Generate the student stubs in `assignments/` from `solutions/`, and lint the solution markers.

Every `### BEGIN SOLUTION` ... `### END SOLUTION` region is cleared by nbgrader's own `ClearSolutions`
(so the release matches what nbgrader would produce) and then turned into a TODO comment and a
`raise NotImplementedError("Part N (module): function is not implemented yet")`.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import re
import tokenize
from pathlib import Path

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions
from traitlets.config import Config

from shared.parts import BY_MODULE, MODULES

ROOT = Path(__file__).resolve().parent.parent
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
# A marker line holds the marker and nothing else, e.g. "### BEGIN SOLUTION".
MARKER_COMMENT = re.compile(r"#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*")
# What ClearSolutions writes for each region; replaced right after by the named raise.
PLACEHOLDER = 'raise NotImplementedError("@@instructor-stub@@")'
# f-strings are tokenized piecewise from Python 3.12 on.
STRING_TOKENS = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _functions(tree: ast.AST) -> list[tuple[str, int, int]]:
    """List (qualified name, first line, last line) of every function, e.g. `ShowTellRNN.forward`."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    found.append((name, child.lineno, child.end_lineno))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _innermost(functions: list[tuple[str, int, int]], line: int) -> tuple[str, int, int] | None:
    """The deepest function whose body holds `line` (after its `def` line), or None."""
    holding = [f for f in functions if f[1] < line <= f[2]]
    return max(holding, key=lambda f: f[1], default=None)


def _clear_regions(text: str) -> str:
    """Run nbgrader's ClearSolutions and ClearHiddenTests on `text` as a one-cell notebook."""
    cell = nbformat.v4.new_code_cell(text)
    # nbgrader replaces a whole solution cell that has no region by the stub, so a module
    # without TODOs is marked as a plain grade cell and passes through unchanged.
    cell.metadata["nbgrader"] = {
        "solution": "BEGIN SOLUTION" in text,
        "grade": True,
        "points": 0,
        "grade_id": "module",
        "locked": False,
        "schema_version": 3,
    }
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    config = Config()
    config.ClearSolutions.code_stub = {"python": PLACEHOLDER}
    nb, _ = ClearSolutions(config=config).preprocess(nb, {})
    nb, _ = ClearHiddenTests(config=config).preprocess(nb, {})
    return nb.cells[0].source


def strip_solutions(text: str, module: str) -> str:
    """Return the student stub of solution module `module` (e.g. "show_and_tell") given its text."""
    if module not in BY_MODULE:
        raise ValueError(f"unknown module {module!r}; expected one of {', '.join(MODULES)}")
    part = BY_MODULE[module].number
    stripped = _clear_regions(text)
    functions = _functions(ast.parse(stripped))
    lines = []
    for number, line in enumerate(stripped.split("\n"), start=1):
        if line.strip() != PLACEHOLDER:
            lines.append(line)
            continue
        owner = _innermost(functions, number)
        if owner is None:
            raise ValueError(f"solutions/{module}.py: a solution region is not inside a function")
        indent = line[: len(line) - len(line.lstrip())]
        lines.append(f"{indent}# TODO (Part {part}): implement {owner[0]}")
        lines.append(f'{indent}raise NotImplementedError("Part {part} ({module}): {owner[0]} is not implemented yet")')
    # The header goes after the module docstring, which must stay first for help().
    tree = ast.parse("\n".join(lines))
    has_docstring = ast.get_docstring(tree, clean=False) is not None
    at = tree.body[0].end_lineno if has_docstring else 0
    header = f"# Generated from the reference {module}.py by `python -m instructor stubs`; do not edit by hand."
    lines.insert(at, header)
    return "\n".join(lines)


def lint_solution(text: str, path: str) -> list[str]:
    """Check the markers of a solution file; return one "path:line: message" per problem."""
    try:
        functions = _functions(ast.parse(text))
    except SyntaxError as exc:
        return [f"{path}:{exc.lineno}: does not parse: {exc.msg}"]
    errors, markers, code_rows = [], [], set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENDMARKER,
        ):
            code_rows.add(tok.start[0])
        marker = next((m for m in MARKERS if m in tok.string), None)
        if marker is None:
            continue
        row = tok.start[0]
        if tok.type in STRING_TOKENS:
            row += tok.string[: tok.string.index(marker)].count("\n")
            errors.append((row, f"'{marker}' inside a string literal (nbgrader would still treat it as a marker)"))
        elif tok.type == tokenize.COMMENT:
            if tok.line[: tok.start[1]].strip():
                errors.append((row, f"'{marker}' trails code; put it alone on its own line"))
            elif not MARKER_COMMENT.fullmatch(tok.string):
                errors.append((row, f"'{marker}' must be alone on its comment line"))
            kind, what = marker.split(" ", 1)
            markers.append((row, kind, what))

    # Pair the markers as nbgrader would, which fails on nesting and on a missing END.
    open_, regions = [], []
    for row, kind, what in markers:
        if kind == "BEGIN":
            if open_:
                errors.append((row, f"nested BEGIN {what} inside the region opened at line {open_[-1][0]}"))
            open_.append((row, what))
        elif not open_:
            errors.append((row, f"END {what} without BEGIN"))
        else:
            start, opened = open_.pop()
            if opened != what:
                errors.append((row, f"END {what} closes BEGIN {opened} of line {start}"))
            elif not open_:
                regions.append((start, row, what))
    errors += [(row, f"BEGIN {what} without END") for row, what in open_]

    # A solution region lies in one function: it becomes a single raise there.
    for start, end, what in regions:
        if what != "SOLUTION":
            continue
        owner = _innermost(functions, start)
        if owner is None:
            errors.append((start, "solution region is not inside a function"))
            continue
        outside = [r for r in sorted(code_rows) if start < r < end and not owner[1] <= r <= owner[2]]
        if outside:
            errors.append(
                (
                    start,
                    f"solution region (lines {start}-{end}) spans more than one "
                    f"function: line {outside[0]} is outside {owner[0]}",
                )
            )
    return [f"{path}:{row}: {message}" for row, message in sorted(errors)]


def lint_stub(text: str, path: str) -> list[str]:
    """Check a generated stub: no marker left, and it parses."""
    errors = [
        f"{path}:{row}: leftover marker '{marker}'"
        for row, line in enumerate(text.split("\n"), start=1)
        for marker in MARKERS
        if marker in line
    ]
    try:
        ast.parse(text)
    except SyntaxError as exc:
        errors.append(f"{path}:{exc.lineno}: does not parse: {exc.msg}")
    return errors


def generate_stubs(solutions_dir: Path) -> dict[str, str]:
    """Stub text of every part module present in `solutions_dir`, keyed by module name."""
    solutions_dir = Path(solutions_dir)
    return {
        module: strip_solutions((solutions_dir / f"{module}.py").read_text(encoding="utf-8"), module)
        for module in MODULES
        if (solutions_dir / f"{module}.py").exists()
    }


def build_stubs(solutions_dir: Path, assignments_dir: Path) -> dict[str, str]:
    """Write `assignments_dir/<module>.py` for every solution module present; return the texts."""
    stubs = generate_stubs(solutions_dir)
    for module, text in stubs.items():
        (Path(assignments_dir) / f"{module}.py").write_text(text, encoding="utf-8")
    return stubs


def stub_diff(module: str, expected: str, assignments_dir: Path) -> str:
    """Unified diff from the committed stub of `module` to the freshly generated one."""
    path = Path(assignments_dir) / f"{module}.py"
    actual = path.read_text(encoding="utf-8") if path.exists() else ""
    return "".join(
        difflib.unified_diff(
            actual.splitlines(True),
            expected.splitlines(True),
            f"assignments/{module}.py (committed)",
            f"assignments/{module}.py (generated)",
        )
    )


def check_drift(solutions_dir: Path, assignments_dir: Path) -> list[str]:
    """Modules whose committed stub is missing or differs from the one generated now."""
    return [
        module for module, text in generate_stubs(solutions_dir).items() if stub_diff(module, text, assignments_dir)
    ]


class StubDrift(ValueError):
    """A committed stub is missing, differs from the one generated from its solution, or fails the lint; the
    message is one line saying which and what to run."""


def committed_stubs(root: Path = ROOT) -> dict[str, str]:
    """{module: text} of the committed stub of every part (root/assignments/), each checked against the stub
    generated from root/solutions/ now: what may be handed to students (the nbgrader course, the handout).
    StubDrift when one is missing, has drifted or fails the lint."""
    solutions, assignments = Path(root) / "solutions", Path(root) / "assignments"
    generated = generate_stubs(solutions)
    stubs = {}
    for module in MODULES:
        path = assignments / f"{module}.py"
        if module not in generated or not path.is_file():
            raise StubDrift(f"assignments/{module}.py or solutions/{module}.py is missing")
        if stub_diff(module, generated[module], assignments):
            raise StubDrift(
                f"assignments/{module}.py differs from the stub generated from solutions/{module}.py; "
                "run `python -m instructor stubs` first"
            )
        text = path.read_text(encoding="utf-8")
        problems = lint_stub(text, f"assignments/{module}.py")
        if problems:
            raise StubDrift("; ".join(problems))
        stubs[module] = text
    return stubs


def lint_all(solutions_dir: Path, assignments_dir: Path) -> list[str]:
    """Lint every `.py` file in `solutions_dir` (markers) and in `assignments_dir` (leftovers)."""
    errors = []
    for path in sorted(Path(solutions_dir).glob("*.py")):
        errors += lint_solution(path.read_text(encoding="utf-8"), f"solutions/{path.name}")
    for path in sorted(Path(assignments_dir).glob("*.py")):
        errors += lint_stub(path.read_text(encoding="utf-8"), f"assignments/{path.name}")
    return errors


def _run_stubs(args: argparse.Namespace) -> int:
    """`stubs [--check]`: write the stubs, or report the drifted ones and fail."""
    solutions, assignments = args.root / "solutions", args.root / "assignments"
    if not args.check:
        for module in build_stubs(solutions, assignments):
            print(f"wrote assignments/{module}.py")
        return 0
    stubs = generate_stubs(solutions)
    drifted = check_drift(solutions, assignments)
    for module in drifted:
        print(f"assignments/{module}.py differs from its generated stub:")
        print(stub_diff(module, stubs[module], assignments))
    if drifted:
        print("run `python -m instructor stubs` to regenerate")
    return 1 if drifted else 0


def _run_lint(args: argparse.Namespace) -> int:
    """`lint`: print every marker problem in solutions and stubs; fail if there is one."""
    errors = lint_all(args.root / "solutions", args.root / "assignments")
    print("\n".join(errors) if errors else "lint: no problems")
    return 1 if errors else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `stubs` and `lint` commands to the instructor CLI."""
    stubs = subparsers.add_parser("stubs", help="generate assignments/ from solutions/")
    stubs.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a committed stub differs from its generated one"
    )
    stubs.set_defaults(run=_run_stubs)
    lint = subparsers.add_parser("lint", help="check the markers in solutions/ and assignments/")
    lint.set_defaults(run=_run_lint)
    for parser in (stubs, lint):
        parser.add_argument("--root", type=Path, default=ROOT, help="project root holding solutions/ and assignments/")
