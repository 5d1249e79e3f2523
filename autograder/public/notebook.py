"""The public checks of one part from a notebook cell: what a grade cell of the nbgrader course runs where the kit's
grader is not installed (a student's environment holds the handout or the fetched nbgrader assignment, each with
this checker, not the kit).

    from autograder.public.notebook import grade_part
    grade_part("bleu", points=15)        # prints the public checks' lines; the value is their points

Same contract as autograder.grader.notebook.grade_part, which grades every check where the kit is installed: the
cell's value is a number (nbgrader takes a grade cell's first numeric result as its score), nothing is written to
stderr, and student code runs in the worker process, never in the kernel. Here the number is the points of the
public checks alone: what the part will get is known only after the course's grader runs the hidden and training
checks too, and the printed table says so.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from shared.parts import BY_MODULE, MODULES


def grade_part(part: str, folder: str = ".", points: float | None = None) -> float:
    """Run the public checks of `part` on `folder/<part>.py`, print their table and return their points.

    `points` is the grade cell's maximum (the part's full points); the public checks are worth less, never more,
    and their points are returned as they are. A broken or missing module scores 0 and never raises."""
    if part not in BY_MODULE:
        raise ValueError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
    from autograder.public import checker
    from autograder.public.score_table import table

    # warnings.warn and friends write to sys.stderr as it is when they fire: here, to stdout.
    with contextlib.redirect_stderr(sys.stdout):
        report = checker.check(Path(folder), parts=(part,))
    p = BY_MODULE[part]
    print(
        f"Part {p.number} ({part}): {p.title}. The public checks only: the course's grader, which also runs the "
        "hidden and training checks, is not installed here."
    )
    print(table(report))
    return round(float(report.score), 6)
