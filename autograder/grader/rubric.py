"""The rubric: points and visibility of every check, read from rubric.json and validated against
rubric.schema.json. Public checks run on students' machines (`python -m autograder check`); hidden
checks run only on the grader and show only the property they test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autograder.public.runner import Entry

HERE = Path(__file__).resolve().parent


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
    """{part: {check name: Entry}} in file order, each check numbered by its position in its part; raises
    jsonschema.ValidationError on a malformed rubric."""
    data = json.loads(Path(path).read_text())
    _import_jsonschema().validate(data, json.loads((HERE / "rubric.schema.json").read_text()))
    return {
        part: {
            name: Entry(float(e["points"]), e["visibility"], i + 1)
            for i, (name, e) in enumerate(spec["checks"].items())
        }
        for part, spec in data["parts"].items()
    }
