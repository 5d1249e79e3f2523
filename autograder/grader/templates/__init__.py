"""Files the kit writes for other tools, kept as files: Gradescope's setup.sh and run_autograder (the zip's root,
autograder/grader/gradescope.py) and nbgrader's nbgrader_config.py (instructor/nbgrader_course.py). A template's
placeholders are @NAME@; render() fills every one of them (the student handout's README, instructor/handout_files/, is
rendered the same way)."""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def text(name: str, folder: Path = HERE) -> str:
    """The template `name` (in `folder`, by default this one) as it is stored."""
    return (Path(folder) / name).read_text(encoding="utf-8")


def render(name: str, folder: Path = HERE, **values: object) -> str:
    """The template `name` (in `folder`) with each @KEY@ replaced by str(values[KEY]); every placeholder must be
    given and every value used."""
    template = text(name, folder)
    wanted = set(PLACEHOLDER.findall(template))
    if wanted != set(values):
        raise ValueError(f"template {name}: expected values for {sorted(wanted)}, got {sorted(values)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
