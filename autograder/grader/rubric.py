"""The rubric: points and visibility of every check, read from rubric.json and validated against
rubric.schema.json. Public checks run on students' machines (`python -m autograder check`); hidden
checks run only on the grader and show only the property they test."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from autograder.public.runner import Entry

HERE = Path(__file__).resolve().parent


def load(path: Path = HERE / "rubric.json") -> dict[str, dict[str, Entry]]:
    """{part: {check name: Entry}} in file order, each check numbered by its position in its part; raises
    jsonschema.ValidationError on a malformed rubric."""
    data = json.loads(Path(path).read_text())
    jsonschema.validate(data, json.loads((HERE / "rubric.schema.json").read_text()))
    return {part: {name: Entry(float(e["points"]), e["visibility"], i + 1)
                   for i, (name, e) in enumerate(spec["checks"].items())}
            for part, spec in data["parts"].items()}
