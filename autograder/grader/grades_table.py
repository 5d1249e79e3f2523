"""The class's grades table, the files of a batch the staff open in a spreadsheet: grades.csv's columns and its rows
(read back from each submission's results.json), the maxima beside it, cells no spreadsheet runs as a formula, and
outputs only their owner reads. Used by the batch, the gradebook export and the similarity report alike."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

from autograder.grader.intake import Submission
from shared.parts import PARTS

# A cell starting with one of these is read as a formula by spreadsheets (CWE-1236).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def safe_cell(value, limit: int = 200) -> str:
    """A CSV cell that no spreadsheet will execute: control characters removed, length capped, and a
    leading quote before anything a spreadsheet would read as a formula. Numbers pass unchanged."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    text = CONTROL.sub("", str(value))[:limit]
    return "'" + text if text.startswith(FORMULA_START) else text


def owner_only(path: Path) -> Path:
    """`path` readable by its owner alone: a batch's outputs are the staff's (a worker must not read a classmate's
    results or report)."""
    os.chmod(path, 0o700 if path.is_dir() else 0o600)
    return path


def row_from_results(submission: Submission, results: Path) -> dict:
    """A grades.csv row read back from a results.json (so resumed runs and fresh ones agree)."""
    from autograder.grader.results import graded_parts, missing_parts, status

    document = json.loads(results.read_text())
    row = {"id": submission.id, "name": submission.name, "total": document.get("score", 0.0)}
    for part in PARTS:
        tests = [t for t in document.get("tests", []) if part.module in t.get("tags", [])]
        row[part.module] = sum(t["score"] for t in tests) if tests else 0.0
    missing, graded = missing_parts(document), graded_parts(document)
    row["submitted"] = len(graded) - len(missing)
    row["status"] = status(document, missing, graded)
    return row


COLUMNS = ["id", "name", "submitted", *[p.module for p in PARTS], "total", "status"]


def maxima() -> dict[str, float]:
    """Each part's points and the total, from the rubric."""
    from autograder.grader import rubric

    points = {part: sum(e.points for e in entries.values()) for part, entries in rubric.load().items()}
    return {**points, "total": sum(points.values()), "submitted": float(len(PARTS))}


GRADES_CSV, MAXIMA_CSV, HISTOGRAMS = "grades.csv", "grades-maxima.csv", "histograms.png"  # in DIR, beside DIR/<id>/


def write_csv(rows: list[dict], path: Path) -> None:
    """grades.csv: one row per submission; beside it, grades-maxima.csv: the same header and one row of maxima
    (the points of each part and of the total, the number of modules), so grades.csv stays one row per student."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([safe_cell(row.get(c, "")) for c in COLUMNS])
    top = maxima()
    with open(Path(path).with_name(MAXIMA_CSV), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerow([safe_cell(top[c]) if c in top else ("maximum" if c == "id" else "") for c in COLUMNS])
