"""Files the kit writes for other tools, kept as files: Gradescope's setup.sh and run_autograder (the zip's root,
autograder/grader/gradescope.py) and nbgrader's nbgrader_config.py (instructor/nbgrader_course.py). A template's
placeholders are @NAME@; render() fills every one of them."""
from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def text(name: str) -> str:
    """The template `name` as it is stored."""
    return (HERE / name).read_text(encoding="utf-8")


def render(name: str, **values: object) -> str:
    """The template `name` with each @KEY@ replaced by str(values[KEY]); every placeholder must be given and
    every value used."""
    template = text(name)
    wanted = set(PLACEHOLDER.findall(template))
    if wanted != set(values):
        raise ValueError(f"template {name}: expected values for {sorted(wanted)}, got {sorted(values)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
