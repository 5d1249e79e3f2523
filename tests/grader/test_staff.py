"""The staff view: every failed check's case and traceback reaches the course staff (grade --staff, batch,
Gradescope's instructor-only stdout) and nothing a student receives (results.json's tests, the feedback report,
the files a student's handout is built from). A hidden check shows a student only the kind of exception it
raised."""

import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema

from autograder.grader import gradescope
from autograder.grader.report.html import render_report
from autograder.grader.results import gradescope_results
from autograder.grader.staff import staff_text
from autograder.public.checks import Check
from autograder.public.client import StudentError
from autograder.public.compare import CheckFailed
from autograder.public.grade_report import CheckResult, GradeReport
from autograder.public.outcomes import _outcome

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope_results.schema.json").read_text())
# What a student's handout is built from (issue: the student handout): the stubs, notebooks and their tests, the
# public and worker zones, shared/. None of it may hold or reach the staff view.
STUDENT_ZONES = ("assignments", "autograder/public", "autograder/worker", "shared")

SECRET = "index 7 is out of bounds for the hidden corpus ['zebra', 'quokka']"
WHERE = (
    '  File "bleu.py", line 181, in corpus_bleu\n    return _bleu(hyps, refs)\n'
    '  File "bleu.py", line 42, in _bleu\n    best = counts[7]\n'
)


def check(description="corpus_bleu is invariant under reordering the corpus"):
    def fn(student, ctx):
        pass

    fn.__doc__ = description
    return Check("bleu", "corpus_bleu_order_invariant", fn, 10.0)


def test_a_hidden_exception_shows_the_student_that_it_raised_not_the_kind_the_message_nor_the_line():
    hidden = _outcome(StudentError("IndexError", SECRET, WHERE), check(), visible=False)
    assert hidden.output == "your code raised an exception"  # kind and line are the module's to choose (A52, A58)
    assert "IndexError" in hidden.note and SECRET in hidden.note and WHERE.strip() in hidden.note  # for the staff
    public = _outcome(StudentError("IndexError", SECRET, WHERE), check(), visible=True)
    assert SECRET in public.output and "line 42" in public.output
    grader_round = _outcome(StudentError("IndexError", SECRET, WHERE), check(), visible=True, grader_cases=True)
    assert grader_round.output == "your code raised an exception on cases the grader draws from its hidden seed"
    assert WHERE.strip() in grader_round.note


def test_a_hidden_verdict_keeps_its_case_and_falsifying_example_for_the_staff():
    failed = CheckFailed(f"corpus_bleu: expected 0.5, got 0.25 [{SECRET}]")
    failed.add_note("Falsifying example: corpus_bleu_order_invariant(corpus=['zebra'])")
    outcome = _outcome(failed, check(), visible=False)
    assert outcome.output == "failed: corpus_bleu is invariant under reordering the corpus"
    assert (
        SECRET in outcome.note and "Falsifying example: corpus_bleu_order_invariant(corpus=['zebra'])" in outcome.note
    )


def a_report() -> GradeReport:
    hidden = _outcome(StudentError("IndexError", SECRET, WHERE), check(), visible=False)
    return GradeReport(
        [
            CheckResult(
                "bleu",
                "ngram_counts_is_the_counter_of_ngrams",
                "3.1",
                "ngram_counts counts n-grams",
                1.0,
                1.0,
                "public",
                "passed",
                0.1,
            ),
            CheckResult(
                "bleu",
                "corpus_bleu_order_invariant",
                "3.7",
                check().description,
                0.0,
                2.0,
                "hidden",
                hidden.output,
                0.2,
                hidden.note,
            ),
        ],
        seconds=0.3,
        notes=["student code ran as an unprivileged user"],
    )


def test_the_staff_view_holds_what_students_never_see():
    text = staff_text(a_report(), "ada")
    assert text.startswith("Staff view of ada: 1 / 3, 1 failed check\n")
    assert "3.7 bleu.corpus_bleu_order_invariant (hidden, 0 of 2)" in text and SECRET in text
    assert 'File "bleu.py", line 42, in _bleu' in text and "your code raised an exception" in text
    assert "IndexError: " + SECRET in text  # the kind, for the staff
    assert "3.1" not in text  # passed checks need no explanation


def test_results_json_and_the_feedback_report_hold_no_staff_note():
    report = a_report()
    document = gradescope_results(report)
    jsonschema.validate(document, SCHEMA)
    assert document["stdout_visibility"] == "hidden"
    shown = json.dumps(document) + render_report(report, submission="ada")
    assert SECRET not in shown and "line 42, in _bleu" not in shown and "counts[7]" not in shown
    assert "your code raised an exception" in json.dumps(document) and "bleu.py:42" not in shown
    assert "IndexError" not in shown


def test_gradescope_puts_the_staff_view_on_the_instructors_stdout_only(tmp_path, monkeypatch, capsys):
    import autograder.grader.engine as engine

    monkeypatch.setattr(engine, "grade", lambda folder: a_report())
    (tmp_path / "submission").mkdir()
    gradescope._graded_in_child(tmp_path)
    results = (tmp_path / "results" / "results.json").read_text()
    assert SECRET not in results and json.loads(results)["stdout_visibility"] == "hidden"
    assert SECRET in capsys.readouterr().out


def test_nothing_a_student_receives_holds_or_reaches_the_staff_view():
    pattern = re.compile(
        r"grader\.staff|grader import staff|staff_text|staff\.txt|STAFF_FILE|write_staff"
    )  # imports: test_zones
    leaks = [
        f"{path.relative_to(ROOT)}:{n}"
        for zone in STUDENT_ZONES
        for path in sorted((ROOT / zone).rglob("*"))
        if path.is_file() and path.suffix in (".py", ".ipynb", ".json", ".md", ".txt")
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not leaks, leaks


def test_grade_staff_writes_the_staff_view_beside_results_json(tmp_path):
    """The stubbed bleu.py: every hidden check stops at a TODO; results.json says only the exception's kind (not the
    line or the message: student code may raise one of its own choosing), staff.txt shows the message and traceback."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bleu.py").write_text((ROOT / "assignments" / "bleu.py").read_text())
    out = tmp_path / "out"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(tmp_path / "sub"),
            "--part",
            "bleu",
            "--json",
            str(out / "results.json"),
            "--staff",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    staff = out / "staff.txt"
    assert stat.S_IMODE(staff.stat().st_mode) == 0o600 and "(for the course staff only)" in run.stdout
    text, results = staff.read_text(), json.loads((out / "results.json").read_text())
    hidden = [t for t in results["tests"] if "hidden" in t["tags"]]
    assert hidden and all(t["output"] == "your code raised NotImplementedError (an unwritten TODO)" for t in hidden), (
        hidden
    )
    assert 'File "bleu.py", line' in text and 'File "bleu.py", line' not in json.dumps(results)
    assert all(f"{t['number']} bleu." in text for t in results["tests"])
