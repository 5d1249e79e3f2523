"""Look for the answers in what students receive: `python -m instructor.leak_scan DIR_OR_ZIP ...`.

Two scans, each on a set of files {path: bytes} (a handout folder or zip, an nbgrader release, the files of the
Gradescope zip that student code can read):

- solution lines: any run of RUN (3) consecutive non-trivial lines of a solution region of `solutions/*.py`
  (`### BEGIN SOLUTION` ... `### END SOLUTION`) that appears, in the same order and consecutive there too, in one
  file's code, after both sides are normalised: comments and blank lines dropped, whitespace between tokens
  ignored, every string literal made one placeholder, and every name made another placeholder except Python's
  keywords, its builtins and attribute names. Renaming a local variable or a parameter is the cheapest disguise
  and changes nothing the code does, so names go; an attribute name (`torch.stack`, `self.attention_step`,
  `.append`) is what the line does to the objects it is given, so it stays, and so do keywords and builtins
  (`range`, `zip`, `len`), which are the line's structure.
  A line is trivial (skipped on both sides, so it neither starts nor breaks a run) when it is blank, a comment, a
  docstring line, an import, a solution marker, or has fewer than MEANINGFUL tokens once brackets, commas, colons
  and dots are left out (`return x`, `pass`, `)`, `else:`, `break`: see `is_trivial`).
- staff-only files: no file in a folder named `rubrics`, or whose first five lines have one that starts with
  "staff-only" (a comment `# Staff-only: ...`, `<!-- staff only -->`), and no copy of such a file of the kit's
  instructor/ tree under another name.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import io
import json
import keyword
import re
import sys
import tokenize
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUN = 3  # consecutive non-trivial solution lines that make a leak
MEANINGFUL = 3  # tokens (brackets, commas, colons and dots left out) a line needs to be non-trivial
NAME, STRING = "$n", "$s"
KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
PUNCTUATION = frozenset("()[]{},:.;")
# A file of the instructor tree that says so in its first lines is staff-only, wherever it lies.
STAFF_ONLY_MARK = "staff-only"
STAFF_ONLY_LINE = re.compile(r"^\W*staff[- ]only\b", re.IGNORECASE)  # "# Staff-only: ...", "<!-- staff only -->"
STAFF_FOLDERS = ("rubrics",)
_TOKEN = re.compile(
    r"""(?P<string>[rRbBuUfF]{0,2}("[^"]*"?|'[^']*'?))|(?P<name>[A-Za-z_]\w*)|(?P<number>\d[\w.]*)"""
    r"""|(?P<op>\*\*=?|//=?|->|[-+*/%@&|^<>=!]=|<<|>>|:=|\S)"""
)


@dataclass(frozen=True)
class Line:
    """One non-trivial line: where it is and its normalised tokens."""

    path: str
    number: int
    text: str
    key: tuple[str, ...]


@dataclass(frozen=True)
class Leak:
    """A run of solution lines found in a student file."""

    region: str  # "solutions/attention.py:152 (AttnCaptioner.forward)"
    path: str  # the student file
    lines: tuple[Line, ...]  # the solution's lines of the run
    found: tuple[Line, ...]  # the student file's lines of the run

    def __str__(self) -> str:
        shown = "\n".join(
            f"      {a.text.strip()}    ~    {self.path}:{b.number}: {b.text.strip()}"
            for a, b in zip(self.lines, self.found)
        )
        return f"{self.region}, lines {self.lines[0].number}-{self.lines[-1].number}, in {self.path}:\n{shown}"


def normalise(text: str) -> tuple[str, ...]:
    """The tokens of one line of code, names and strings replaced by placeholders (the module's docstring says
    which names stay)."""
    code = _without_comment(text)
    tokens = []
    for match in _TOKEN.finditer(code):
        kind, value = match.lastgroup, match.group(0)
        if kind == "string":
            tokens.append(STRING)
        elif kind == "name":
            after_dot = bool(tokens) and tokens[-1] == "."
            tokens.append(value if after_dot or value in KEPT_NAMES else NAME)
        else:
            tokens.append(value)
    return tuple(tokens)


def _without_comment(text: str) -> str:
    """`text` up to a `#` that is outside a string literal."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return text[:i]
    return text


def is_trivial(text: str, key: tuple[str, ...]) -> bool:
    """Blank, a comment, an import, or fewer than MEANINGFUL tokens besides brackets, commas, colons and dots:
    `return x`, `pass`, `)`, `else:` carry no answer of their own (`logits.append(step)` has three and counts)."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#") or stripped.startswith(("import ", "from ")):
        return True
    return sum(token not in PUNCTUATION for token in key) < MEANINGFUL


def _docstring_lines(source: str) -> set[int]:
    """Line numbers of every docstring of `source` (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found |= set(range(first.lineno, first.end_lineno + 1))
    return found


def _string_lines(source: str) -> set[int]:
    """Lines inside a multi-line string literal after its first line (their text is not code)."""
    inside = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                inside |= set(range(tok.start[0] + 1, tok.end[0] + 1))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return inside


def code_lines(path: str, source: str, first: int = 1, last: int | None = None) -> list[Line]:
    """The non-trivial lines of Python `source` between lines `first` and `last`, normalised."""
    skip = _docstring_lines(source) | _string_lines(source)
    lines = []
    for number, text in enumerate(source.split("\n"), start=1):
        if number < first or (last is not None and number > last) or number in skip:
            continue
        if "BEGIN SOLUTION" in text or "END SOLUTION" in text:
            continue
        key = normalise(text)
        if not is_trivial(text, key):
            lines.append(Line(path, number, text, key))
    return lines


def solution_regions(solutions: Path = ROOT / "solutions") -> dict[str, list[Line]]:
    """{"solutions/<module>.py:<line> (<function>)": its non-trivial lines} for every solution region."""
    from instructor.stubs import _functions, _innermost

    regions = {}
    for path in sorted(Path(solutions).glob("*.py")):
        source = path.read_text(encoding="utf-8")
        functions = _functions(ast.parse(source))
        begin = None
        for number, text in enumerate(source.split("\n"), start=1):
            if "### BEGIN SOLUTION" in text:
                begin = number
            elif "### END SOLUTION" in text and begin is not None:
                owner = _innermost(functions, begin)
                name = f"solutions/{path.name}:{begin} ({owner[0] if owner else '?'})"
                regions[name] = code_lines(f"solutions/{path.name}", source, begin + 1, number - 1)
                begin = None
    return regions


def student_code(files: dict[str, bytes]) -> dict[str, list[Line]]:
    """{path: its non-trivial lines} of every Python module and notebook code cell of `files` (other files: their
    text lines, normalised the same way, so that code pasted into a README or a markdown cell is found too)."""
    found = {}
    for path, data in files.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary (golden data): numbers, not lines of code
        if path.endswith(".ipynb"):
            for i, cell in enumerate(json.loads(text).get("cells", [])):
                source = "".join(cell.get("source", []))
                found[f"{path}[cell {i}]"] = code_lines(f"{path}[cell {i}]", source)
        else:
            found[path] = code_lines(path, text)
    return found


def leaks(files: dict[str, bytes], regions: dict[str, list[Line]] | None = None) -> list[Leak]:
    """Every run of RUN consecutive non-trivial lines of a solution region that is RUN consecutive non-trivial lines
    of one file of `files` too (normalised), once per (region, file, first line of the run)."""
    regions = solution_regions() if regions is None else regions
    windows: dict[tuple[tuple[str, ...], ...], list[tuple[str, tuple[Line, ...]]]] = {}
    for path, lines in student_code(files).items():
        for i in range(len(lines) - RUN + 1):
            run = tuple(lines[i : i + RUN])
            windows.setdefault(tuple(line.key for line in run), []).append((path, run))
    found = []
    for region, lines in regions.items():
        for i in range(len(lines) - RUN + 1):
            run = tuple(lines[i : i + RUN])
            for path, where in windows.get(tuple(line.key for line in run), []):
                found.append(Leak(region, path, run, where))
    return found


def is_staff_only(path: str, data: bytes | None = None) -> bool:
    """A file of a `rubrics` folder, or one whose first lines say STAFF_ONLY_MARK."""
    if any(part in STAFF_FOLDERS for part in Path(path).parts[:-1]):
        return True
    head = (data or b"")[:2000].decode("utf-8", errors="replace").splitlines()[:5]
    return any(STAFF_ONLY_LINE.match(line) for line in head)


def staff_files(root: Path = ROOT) -> dict[str, bytes]:
    """The staff-only files of the kit's instructor/ tree: {path from the kit's root: bytes}."""
    found = {}
    for path in sorted((Path(root) / "instructor").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(root).as_posix()
            data = path.read_bytes()
            if is_staff_only(rel, data):
                found[rel] = data
    return found


def staff_leaks(files: dict[str, bytes], root: Path = ROOT) -> list[str]:
    """Each file of `files` that is staff-only itself, or holds the bytes of a staff-only file of the kit."""
    staff = {data: path for path, data in staff_files(root).items() if data.strip()}
    found = []
    for path, data in files.items():
        if is_staff_only(path, data):
            found.append(f"{path}: a staff-only file (a `rubrics` folder, or marked {STAFF_ONLY_MARK!r})")
        elif data in staff:
            found.append(f"{path}: the staff-only {staff[data]}")
    return found


def read_files(where: Path) -> dict[str, bytes]:
    """{path: bytes} of every file under the folder `where`, or of every member of the zip `where`."""
    where = Path(where)
    if where.is_file() and zipfile.is_zipfile(where):
        with zipfile.ZipFile(where) as archive:
            return {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
    return {p.relative_to(where).as_posix(): p.read_bytes() for p in sorted(where.rglob("*")) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m instructor.leak_scan",
        description="Find solution lines and staff-only files in what students get.",
    )
    parser.add_argument("where", nargs="+", type=Path, help="a handout folder or zip, an nbgrader release folder")
    args = parser.parse_args(argv)
    regions, failed = solution_regions(), 0
    for where in args.where:
        files = read_files(where)
        found = [str(leak) for leak in leaks(files, regions)] + staff_leaks(files)
        failed += len(found)
        print(f"{where}: {len(files)} files, {len(found)} leak(s)")
        for line in found:
            print(f"  {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
