"""Grade one part from a notebook cell: what the grade cells of the nbgrader course call
(`python -m instructor nbgrader-course`, see docs/nbgrader.md).

    from autograder.grader.notebook import grade_part
    grade_part("bleu", points=15)        # prints one line per check; the value is the cell's score

nbgrader scores a grade cell by its outputs (nbgrader.utils.determine_grade): an error output or any
output on stderr gives 0, otherwise the first result that reads as a number is the partial credit. So
this function returns the points earned, which the cell shows as its result, and sends whatever is
written to sys.stderr while grading (library warnings) to stdout, where it cannot zero the cell.
Student code never runs here: the engine runs it in a separate worker process.

A grade cell runs in the submission's folder, so the hidden data set's cache (shared/encoder.py:
$CAPTIONKIT_CACHE, else ./.cache/captionkit) must not default to the working directory there: nbgrader
would copy it into the student's feedback, and a student could ship a cache of their own. grade_part
uses ~/.cache/captionkit when $CAPTIONKIT_CACHE is unset (the course's nbgrader_config.py sets it to a
folder of the course).
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from shared.parts import BY_MODULE, MODULES


class GraderFailure(RuntimeError):
    """The grader itself failed on a part (not a verdict on the submission)."""


def _indent(text: str, spaces: int, max_lines: int = 12) -> str:
    lines = text.strip("\n").splitlines()
    shown = lines[:max_lines] + (["..."] if len(lines) > max_lines else [])
    return "\n".join(" " * spaces + line for line in shown)


def grade_part(part: str, folder: str = ".", points: float | None = None) -> float:
    """Grade `folder/<part>.py` (every check of the part, hidden ones included); print one line per
    check and return the points earned.

    `points` is the grade cell's maximum: when the rubric's total for the part differs from it (the
    rubric changed after the course was built), the score is scaled to it, so that the cell never
    reports more than it is worth. A broken or missing module scores 0 and never raises; only a
    failure of the grader itself raises GraderFailure (with a short message, nothing of the grader's
    code)."""
    if part not in BY_MODULE:
        raise ValueError(f"unknown part {part!r}; expected one of {', '.join(MODULES)}")
    from autograder.grader.engine import GradeOptions, grade

    os.environ.setdefault("CAPTIONKIT_CACHE", str(Path.home() / ".cache" / "captionkit"))
    # warnings.warn and friends write to sys.stderr as it is when they fire: here, to stdout.
    with contextlib.redirect_stderr(sys.stdout):
        try:
            report = grade(Path(folder), GradeOptions(parts=(part,)))
        except Exception as exc:  # noqa: BLE001 (an error on the grader's side, never the student's)
            raise GraderFailure(
                f"the grader could not grade {part}.py ({type(exc).__name__}); tell the course staff"
            ) from None

    number, title = BY_MODULE[part].number, BY_MODULE[part].title
    score, max_score = report.score, report.max_score
    print(f"Part {number} ({part}): {title}")
    previous = None
    for r in report.results:
        mark = "PASS" if r.passed else "FAIL"
        kind = "" if r.visibility == "public" else " [hidden]"
        print(f"  {mark}  {r.number:5s} {r.score:g}/{r.max_score:g}  {r.name}{kind}")
        if not r.passed:  # what the student may see: a hidden check shows only its property
            print(" " * 8 + "(the same)" if r.output == previous else _indent(r.output, 8))
            previous = r.output
    print(f"Part {number} ({part}): {score:g} / {max_score:g} points ({report.seconds:.0f} s)")
    if points is not None and max_score > 0 and abs(max_score - float(points)) > 1e-9:
        scaled = score * float(points) / max_score
        print(f"(the rubric gives this part {max_score:g} points and this cell {float(points):g}: scored {scaled:g})")
        score = scaled
    return round(float(score), 6)
