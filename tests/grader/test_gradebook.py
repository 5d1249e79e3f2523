"""The gradebook export of a batch folder: Canvas's gradebook import and the long format (one row per student and
check). The batch folder is written by hand (grades.csv and results.json as `batch` writes them), so no grade runs."""

import csv
import json
import re
from pathlib import Path

import pytest

from autograder.grader import batch, gradebook, grades_table
from autograder.grader.cli import main
from autograder.grader.results import write_json_atomic

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "canvas_gradebook_import.csv"
METADATA = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: 'S001'
    :email: ada@example.org
  :created_at: 2026-11-30 10:00:00.000000000 -08:00
submission_102:
  :submitters:
  - :name: Grace Hopper
    :sid: 'S002'
    :email: grace@example.org
  - :name: =HYPERLINK("http://x")
    :sid: 'S004'
    :email: ''
submission_103:
  :submitters:
  - :name: Alan Turing
    :email: alan@example.org
"""


def read_canvas_import(path: Path) -> dict:
    """A CSV read as Canvas's gradebook import documents it (Canvas gradebook import format, in Canvas's guide "How do
    I import grades in the Gradebook?" and the export it mirrors): the header `Student,ID,SIS User ID,SIS Login ID,
    Section` then one column per assignment named `<name> (<id>)` (or `<name>` alone for a new one); an optional
    "Points Possible" row; then one row per student, matched by ID, SIS User ID or SIS Login ID (at least one given);
    a score is a number or empty (no change). Returns {"assignments": [(name, id or None)], "points": [...] or None,
    "students": [{"keys": {...}, "name": ..., "scores": [...]}]}; AssertionError where Canvas would refuse the file."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"], header
    assignments = []
    for column in header[5:]:
        named = re.fullmatch(r"(?P<name>.+?)(?: \((?P<id>\d+)\))?", column)
        assert named and named["name"].strip(), column
        assignments.append((named["name"], named["id"]))
    assert assignments, "no assignment column"
    points = None
    if rows and rows[0][0].strip() == "Points Possible":
        points = [float(v) for v in rows[0][5:]]
        rows = rows[1:]
    students = []
    for row in rows:
        assert len(row) == len(header), row
        keys = dict(zip(("ID", "SIS User ID", "SIS Login ID"), row[1:4]))
        assert any(keys.values()) or row[0], f"a row Canvas cannot match to a student: {row}"
        scores = [float(v) if v != "" else None for v in row[5:]]
        students.append({"name": row[0], "keys": {k: v for k, v in keys.items() if v}, "scores": scores})
    return {"assignments": assignments, "points": points, "students": students}


def results(scores: dict[str, tuple[float, float]]) -> dict:
    """A results.json document with one test per (part, number) -> (score, max_score)."""
    tests = [
        {
            "name": f"Part ? ({key.split(':')[0]}): check {key}",
            "number": key.split(":")[1],
            "score": s,
            "max_score": m,
            "status": "passed" if s == m else "failed",
            "visibility": "visible",
            "output": "",
            "tags": [key.split(":")[0], "public"],
        }
        for key, (s, m) in scores.items()
    ]
    return {"score": sum(t["score"] for t in tests), "execution_time": 1, "output": "", "tests": tests}


@pytest.fixture
def class_folder(tmp_path):
    """(SUBMISSIONS with a Gradescope submission_metadata.yml, a batch's DIR): three graded submissions (one by two
    students), one unreadable, one plain folder without metadata."""
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "submission_metadata.yml").write_text(METADATA)
    out = tmp_path / "out"
    documents = {
        "submission_101": results({"bleu:3.1": (2.0, 2.0), "bleu:3.2": (1.0, 3.0), "decoding:2.1": (4.0, 4.0)}),
        "submission_102": results({"bleu:3.1": (0.0, 2.0), "bleu:3.2": (3.0, 3.0), "decoding:2.1": (0.0, 4.0)}),
        "submission_103": {
            "score": 0.0,
            "execution_time": 0,
            "output": "could not read the submission: not a valid zip file",
            "tests": [],
        },
        "dora": results({"bleu:3.1": (2.0, 2.0), "bleu:3.2": (3.0, 3.0), "decoding:2.1": (4.0, 4.0)}),
    }
    rows = []
    for ident, document in documents.items():
        write_json_atomic(document, out / ident / "results.json")
        submission = batch.Submission(ident, "Ada Lovelace" if ident == "submission_101" else ident, submissions)
        rows.append(grades_table.row_from_results(submission, out / ident / "results.json"))
    grades_table.write_csv(rows, out / "grades.csv")
    return submissions, out


def test_the_fixture_is_what_canvas_documents():
    """The reader accepts Canvas's own example and reads it as Canvas would."""
    document = read_canvas_import(FIXTURE)
    assert document["assignments"] == [("Assignment 1", "1234"), ("Midterm", "5678")]
    assert document["points"] == [10.0, 100.0]
    assert [s["scores"] for s in document["students"]] == [[9.0, 88.5], [10.0, None], [None, 95.0]]


def test_the_canvas_csv_imports_in_the_shape_canvas_documents(class_folder, tmp_path):
    submissions, out = class_folder
    path = gradebook.write(out, "canvas", tmp_path / "canvas.csv", submissions, "Captioning", "4321")
    ours, fixture = read_canvas_import(path), read_canvas_import(FIXTURE)
    with open(path, newline="") as f, open(FIXTURE, newline="") as g:
        assert next(csv.reader(f))[:5] == next(csv.reader(g))[:5]
    assert ours["assignments"] == [("Captioning", "4321")]
    assert ours["points"] == [grades_table.maxima()["total"]] and len(fixture["points"]) == len(fixture["assignments"])
    by_name = {s["name"]: s for s in ours["students"]}
    # Keyed by the metadata's student id (SIS User ID) and email (SIS Login ID); a group's members share its grade.
    assert by_name["Ada Lovelace"] == {
        "name": "Ada Lovelace",
        "keys": {"SIS User ID": "S001", "SIS Login ID": "ada@example.org"},
        "scores": [7.0],
    }
    assert by_name["Grace Hopper"]["keys"] == {"SIS User ID": "S002", "SIS Login ID": "grace@example.org"}
    assert by_name["Grace Hopper"]["scores"] == by_name['\'=HYPERLINK("http://x")']["scores"] == [3.0]
    assert by_name["Alan Turing"] == {
        "name": "Alan Turing",
        "keys": {"SIS Login ID": "alan@example.org"},
        "scores": [None],
    }  # unreadable: left unchanged in Canvas, not a zero
    assert by_name["dora"]["scores"] == [9.0] and by_name["dora"]["keys"] == {}  # no metadata: the folder's name
    assert len(ours["students"]) == 5


def test_a_new_canvas_assignment_has_no_id_and_bad_arguments_are_named(class_folder, tmp_path):
    submissions, out = class_folder
    path = gradebook.write(out, "canvas", tmp_path / "new.csv", submissions)
    assert read_canvas_import(path)["assignments"] == [(gradebook.DEFAULT_ASSIGNMENT, None)]
    with pytest.raises(gradebook.GradebookError, match="--assignment-id: expected Canvas's numeric"):
        gradebook.write(out, "canvas", tmp_path / "x.csv", submissions, "A", "12a")
    with pytest.raises(gradebook.GradebookError, match="--format: expected one of canvas, long"):
        gradebook.write(out, "moodle", tmp_path / "x.csv")
    with pytest.raises(gradebook.GradebookError, match="holds no grades.csv"):
        gradebook.write(submissions, "long", tmp_path / "x.csv")
    (submissions / "submission_metadata.yml").write_text("a: [unclosed")
    with pytest.raises(gradebook.GradebookError, match="not readable as YAML"):
        gradebook.write(out, "canvas", tmp_path / "x.csv", submissions)


def test_the_long_format_has_one_row_per_student_and_check(class_folder, tmp_path):
    submissions, out = class_folder
    path = gradebook.write(out, "long", tmp_path / "long.csv", submissions)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == gradebook.LONG_COLUMNS
    per_student = {}
    for row in rows:
        per_student.setdefault(row["student"], []).append(row)
    assert sorted(per_student) == sorted(
        ["Ada Lovelace", "Grace Hopper", '\'=HYPERLINK("http://x")', "Alan Turing", "dora"]
    )
    for mine in per_student.values():
        ident = mine[0]["submission"]
        tests = json.loads((out / ident / "results.json").read_text())["tests"]
        if not tests:
            assert [(r["check"], r["status"]) for r in mine] == [
                ("", "could not read the submission: not a valid zip file")
            ]
            continue
        assert [r["number"] for r in mine] == [t["number"] for t in tests]
        assert sum(float(r["score"]) for r in mine) == sum(t["score"] for t in tests)
        assert {r["part"] for r in mine} == {"bleu", "decoding"}
    ada = per_student["Ada Lovelace"][0]
    assert (ada["email"], ada["sis_id"], ada["max_score"], ada["status"]) == ("ada@example.org", "S001", "2", "passed")


def test_the_command_and_batch_write_the_gradebook(class_folder, tmp_path, capsys, monkeypatch):
    submissions, out = class_folder
    assert (
        main(
            [
                "gradebook",
                str(out),
                "--format",
                "canvas",
                "--out",
                str(tmp_path / "c.csv"),
                "--submissions",
                str(submissions),
                "--assignment-id",
                "77",
            ]
        )
        == 0
    )
    assert read_canvas_import(tmp_path / "c.csv")["assignments"] == [("captioning", "77")]
    assert (tmp_path / "c.csv").stat().st_mode & 0o077 == 0
    with pytest.raises(SystemExit):
        main(["gradebook", str(tmp_path / "nowhere"), "--format", "long", "--out", str(tmp_path / "l.csv")])
    assert "DIR: " in capsys.readouterr().err
    # batch --gradebook: the export of the folder batch has just written (the grading itself stubbed out here).
    monkeypatch.setattr(batch, "run", lambda *args, **kwargs: [])
    assert main(["batch", str(submissions), "--out", str(out), "--gradebook", "canvas"]) == 0
    written = read_canvas_import(out / "gradebook-canvas.csv")
    assert {s["name"]: s["keys"].get("SIS User ID") for s in written["students"]}["Ada Lovelace"] == "S001"
