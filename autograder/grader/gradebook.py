"""Grades out of a batch's folder in the shapes other gradebooks read.

    python -m autograder gradebook DIR --format canvas|long --out FILE [--submissions SUBMISSIONS]
                                   [--assignment NAME] [--assignment-id ID]
    python -m autograder batch SUBMISSIONS --out DIR --gradebook canvas|long   (DIR/gradebook-<format>.csv)

DIR is a batch's output folder (grades.csv, <id>/results.json). SUBMISSIONS, where given, is the folder the batch
graded: a Gradescope export's submission_metadata.yml there names each submission's submitters with their email
and student id (SIS id), which key the rows; a group submission gives each submitter a row of the same grade.

Two formats:
  - long: one row per student and check, `submission,student,email,sis_id,part,number,check,score,max_score,status`
    (the checks of results.json, in rubric order); a submission that could not be graded has one row with its
    status and no check. For any gradebook, or for a spreadsheet's pivot table.
  - canvas: Canvas's gradebook import (Grades > Import): a header row `Student,ID,SIS User ID,SIS Login ID,Section,
    <assignment> (<id>)`, a second row "Points Possible" with the assignment's maximum, then one row per student:
    their name, no Canvas ID (the kit cannot know it), the SIS User ID (Gradescope's student id) and SIS Login ID
    (the email), no section, the total. Canvas matches a row by any of its ID columns; a column named without
    "(<id>)" makes Canvas create the assignment. A submission that could not be graded has an empty score, which
    Canvas leaves unchanged.
Every cell goes through grades_table.safe_cell: no spreadsheet runs a formula from a student's name.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.grader.grades_table import maxima, safe_cell

FORMATS = ("canvas", "long")


def gradebook_file(fmt: str) -> str:
    """The name of the gradebook export of format `fmt` in a batch's output folder."""
    return f"gradebook-{fmt}.csv"


CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "Points Possible"
LONG_COLUMNS = ["submission", "student", "email", "sis_id", "part", "number", "check", "score", "max_score", "status"]
DEFAULT_ASSIGNMENT = "captioning"


class GradebookError(ValueError):
    """A batch folder or metadata the export cannot read; the message names it and what was expected."""


@dataclass(frozen=True)
class Student:
    name: str
    email: str = ""
    sis_id: str = ""


def _plain(mapping) -> dict:
    """Gradescope writes Ruby symbols: ":submitters:" parses as the key ":submitters"."""
    return {str(k).strip(":"): v for k, v in mapping.items()} if isinstance(mapping, dict) else {}


def submitters(submissions_root: Path | None) -> dict[str, list[Student]]:
    """{submission id: its submitters} from SUBMISSIONS/submission_metadata.yml (Gradescope's export); {} when
    there is none. A file that is there but does not parse is an error: the grades would lose their keys."""
    if submissions_root is None:
        return {}
    meta = Path(submissions_root) / "submission_metadata.yml"
    if not Path(submissions_root).is_dir():
        raise GradebookError(f"--submissions: {submissions_root} is not a folder")
    if not meta.is_file():
        return {}
    try:
        import yaml
    except ImportError:
        raise GradebookError(f"{meta}: reading it needs PyYAML (pip install pyyaml)") from None
    try:
        data = yaml.safe_load(meta.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise GradebookError(f"{meta}: not readable as YAML ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise GradebookError(f"{meta}: expected a mapping of submission ids to their metadata")
    found = {}
    for key, entry in data.items():
        people = [_plain(s) for s in _plain(entry).get("submitters") or []]
        found[str(key)] = [
            Student(str(p.get("name") or ""), str(p.get("email") or ""), str(p.get("sid") or "")) for p in people
        ]
    return found


def _rows_of(out: Path) -> list[dict]:
    grades = Path(out) / "grades.csv"
    if not grades.is_file():
        raise GradebookError(
            f"DIR: {out} holds no grades.csv; expected the output folder of `python -m autograder batch`"
        )
    with open(grades, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _tests_of(out: Path, ident: str) -> list[dict]:
    try:
        return json.loads((Path(out) / ident / "results.json").read_text()).get("tests", [])
    except (OSError, ValueError):
        return []


def _people(row: dict, known: dict[str, list[Student]]) -> list[Student]:
    """Who a grades.csv row belongs to: its submitters from the metadata, else its name (the folder's)."""
    people = [p for p in known.get(row["id"], []) if p.name or p.email or p.sis_id]
    return people or [Student(row.get("name") or row["id"])]


def long_rows(out: Path, known: dict[str, list[Student]] | None = None) -> list[list]:
    """The long format's rows (LONG_COLUMNS), header excluded: per student, one row per check of their results."""
    from autograder.grader.results import was_graded

    rows = []
    for row in _rows_of(out):
        tests = _tests_of(out, row["id"]) if was_graded(row) else []
        for person in _people(row, known or {}):
            who = [row["id"], person.name, person.email, person.sis_id]
            if not tests:
                rows.append(who + ["", "", "", "", "", row.get("status", "")])
            for t in tests:
                part = next((tag for tag in t.get("tags", []) if tag not in ("public", "hidden")), "")
                rows.append(
                    who
                    + [
                        part,
                        t.get("number", ""),
                        t.get("name", ""),
                        float(t.get("score", 0.0)),
                        float(t.get("max_score", 0.0)),
                        t.get("status", ""),
                    ]
                )
    return rows


def canvas_header(assignment: str, assignment_id: str | None) -> list[str]:
    """Canvas's import header: the five student columns, then the assignment's column."""
    if not assignment.strip():
        raise GradebookError("--assignment: expected the assignment's name in Canvas, got an empty one")
    if assignment_id is not None and not str(assignment_id).isdigit():
        raise GradebookError(f"--assignment-id: expected Canvas's numeric assignment id, got {assignment_id!r}")
    return CANVAS_COLUMNS + [f"{assignment} ({assignment_id})" if assignment_id else assignment]


def canvas_rows(out: Path, known: dict[str, list[Student]] | None = None) -> list[list]:
    """The rows after the header: "Points Possible", then one row per student with the submission's total."""
    from autograder.grader.results import was_graded

    rows = [[POINTS_POSSIBLE, "", "", "", "", maxima()["total"]]]
    for row in _rows_of(out):
        score = float(row["total"]) if was_graded(row) and row.get("total") not in (None, "") else ""
        for person in _people(row, known or {}):
            rows.append([person.name, "", person.sis_id, person.email, "", score])
    return rows


def write(
    out: Path,
    fmt: str,
    path: Path,
    submissions_root: Path | None = None,
    assignment: str = DEFAULT_ASSIGNMENT,
    assignment_id: str | None = None,
) -> Path:
    """Write the gradebook of the batch folder `out` in format `fmt` (FORMATS) to `path`; return `path`."""
    if fmt not in FORMATS:
        raise GradebookError(f"--format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if not Path(out).is_dir():
        raise GradebookError(f"DIR: {out} is not a folder")
    known = submitters(submissions_root)
    if fmt == "canvas":
        header, rows = canvas_header(assignment, assignment_id), canvas_rows(out, known)
    else:
        header, rows = LONG_COLUMNS, long_rows(out, known)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        for row in rows:
            writer.writerow([safe_cell(cell) for cell in row])
    path.chmod(0o600)  # names and grades: the staff's alone, like grades.csv
    return path
