"""The rubric: the points and order of every check, read from rubric.json and validated against
rubric.schema.json, and each check's visibility, which is its zone: a check defined in the public zone
(autograder/public/checks/) is public, runs on students' machines (`python -m autograder check`) and prints its
failing case; one defined in the grader's (autograder/grader/checks/, autograder/grader/training/) is hidden, runs
only on the grader and shows only the property it tests."""

from __future__ import annotations

import ast
import functools
import json
import sys
from pathlib import Path

from autograder.public.runner import Entry

HERE = Path(__file__).resolve().parent
PUBLIC_CHECKS = HERE.parent / "public" / "checks"


def _import_jsonschema():
    """jsonschema, imported without its optional "iri" format checker. Where rfc3987_syntax is installed (Jupyter
    brings it), jsonschema imports it at once, and it builds a grammar at import: 1.5 CPU s and 17 MB in every
    grading process, for a format the rubric's schema never uses. With the module marked missing while jsonschema
    is imported, jsonschema leaves that one checker out, as it does wherever the package is absent."""
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import jsonschema

        return jsonschema
    sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError
    try:
        import jsonschema
    finally:
        del sys.modules["rfc3987_syntax"]
    return jsonschema


def load(path: Path = HERE / "rubric.json") -> dict[str, dict[str, Entry]]:
    """{part: {check name: Entry}} in file order, each check numbered by its position in its part and public when
    the public zone defines it (public_checks); raises jsonschema.ValidationError on a malformed rubric. Read and
    validated once per process and version of the file (a grade asks for it once per part, about 0.2 CPU s each
    time); each call gets dictionaries of its own."""
    found = Path(path).stat()
    cached = _loaded(str(path), found.st_mtime_ns, found.st_size, _public_sources_version())
    return {part: dict(entries) for part, entries in cached.items()}


def _public_sources_version() -> tuple[int, ...]:
    """When the public checks' sources last changed (a new version of one makes load read them again)."""
    return tuple(source.stat().st_mtime_ns for source in sorted(PUBLIC_CHECKS.rglob("*.py")))


@functools.lru_cache(maxsize=4)
def _loaded(path: str, *version) -> dict[str, dict[str, Entry]]:
    data = json.loads(Path(path).read_text())
    _import_jsonschema().validate(data, json.loads((HERE / "rubric.schema.json").read_text()))
    public = {part: public_checks(part) for part in data["parts"]}
    return {
        part: {
            name: Entry(float(e["points"]), "public" if name in public[part] else "hidden", i + 1)
            for i, (name, e) in enumerate(spec["checks"].items())
        }
        for part, spec in data["parts"].items()
    }


def public_checks(part: str, folder: Path = PUBLIC_CHECKS) -> frozenset[str]:
    """The checks of `part` the public zone defines: each function decorated with @check(...) in
    `folder`/<part>.py or in the modules of the package `folder`/<part>/. Read with ast, not imported: the rubric
    is read where no check module is loaded (the handout's README, the notebooks' tests)."""
    module, package = folder / f"{part}.py", folder / part
    sources = [module] if module.is_file() else sorted(package.glob("*.py"))
    return frozenset(
        node.name
        for source in sources
        for node in ast.parse(source.read_text(), str(source)).body
        if isinstance(node, ast.FunctionDef) and any(_registers(d) for d in node.decorator_list)
    )


def _registers(decorator: ast.expr) -> bool:
    """`@check(...)` or `@checks.check(...)`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "check") or (
        isinstance(target, ast.Attribute) and target.attr == "check"
    )
