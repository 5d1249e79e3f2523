"""The grader as a whole: the rubric matches the checks, the reference earns full marks, the stubs earn
nothing and grading still finishes, a missing module costs only its part, grading is deterministic, and
results.json follows Gradescope's format without leaking hidden material."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from autograder.__main__ import main as cli
from autograder.grader import rubric as rubric_mod
from autograder.grader.checks import all_checks
from autograder.grader.engine import GradeOptions, grade
from autograder.grader.results import gradescope_results
from autograder.grader.sample import build as build_sample
from autograder.public.grade_report import CheckResult, GradeReport
from shared.parts import MODULES

pytestmark = pytest.mark.xdist_group("full-grade")  # one worker builds the shared fixture

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope_results.schema.json").read_text())


@pytest.fixture(scope="session")
def stub_report():
    return grade(ROOT / "assignments")


def test_rubric_and_checks_agree():
    rubric = rubric_mod.load()
    checks = all_checks()
    assert set(rubric) == set(MODULES), "every part needs rubric entries"
    for part in MODULES:
        assert [c.name for c in checks[part]] == list(rubric[part]), f"{part}: rubric and checks differ"
        kinds = {e.visibility for e in rubric[part].values()}
        assert kinds == {"public", "hidden"}, f"{part}: expected public and hidden checks, got {kinds}"
        zones = {
            c.name: "public" if c.fn.__module__.startswith("autograder.public.") else "hidden" for c in checks[part]
        }
        assert zones == {name: e.visibility for name, e in rubric[part].items()}, f"{part}: visibility is not the zone"


def test_a_malformed_rubric_is_rejected(tmp_path):
    bad = tmp_path / "rubric.json"
    bad.write_text(json.dumps({"version": 1, "parts": {"bleu": {"checks": {"x": {"points": -1}}}}}))
    with pytest.raises(jsonschema.ValidationError):
        rubric_mod.load(bad)


def test_a_rubric_cannot_say_a_checks_visibility_its_zone_says_it(tmp_path):
    """Visibility has one source, the folder a check is defined in: a rubric entry that names one is refused."""
    bad = tmp_path / "rubric.json"
    bad.write_text(
        json.dumps({"version": 1, "parts": {"bleu": {"checks": {"x": {"points": 1, "visibility": "public"}}}}})
    )
    with pytest.raises(jsonschema.ValidationError):
        rubric_mod.load(bad)


def test_the_rubric_is_read_once_and_again_when_its_file_changes(tmp_path):
    """load keeps what it read (a grade asks once per part) until the file changes; every caller gets its own dicts."""
    path = tmp_path / "rubric.json"
    document = json.loads((ROOT / "autograder" / "grader" / "rubric.json").read_text())
    path.write_text(json.dumps(document))
    first = rubric_mod.load(path)
    first["bleu"].clear()
    assert rubric_mod.load(path)["bleu"], "a caller's change reached the next caller"
    name = next(iter(document["parts"]["bleu"]["checks"]))
    document["parts"]["bleu"]["checks"][name]["points"] = 7
    path.write_text(json.dumps(document))
    os.utime(path, ns=(1, 1))  # a new version, whatever the file system's clock resolution
    assert rubric_mod.load(path)["bleu"][name].points == 7


def test_a_check_is_public_where_the_public_zone_defines_it(tmp_path):
    """public_checks reads @check functions of the part's module, or of each module of its package, and nothing
    else: not a helper, not a nested function, not another part's checks."""
    (tmp_path / "bleu.py").write_text(
        "@check()\ndef shown(student, ctx):\n    @check()\n    def nested(): ...\n\n"
        "@checks.check(timeout=1)\ndef also_shown(student, ctx): ...\n\ndef helper(): ...\n"
    )
    (tmp_path / "attention").mkdir()
    (tmp_path / "attention" / "__init__.py").write_text("from . import cells\n")
    (tmp_path / "attention" / "cells.py").write_text("@check()\ndef in_a_package(student, ctx): ...\n")
    assert rubric_mod.public_checks("bleu", tmp_path) == {"shown", "also_shown"}
    assert rubric_mod.public_checks("attention", tmp_path) == {"in_a_package"}


def test_a_grading_process_validates_the_rubric_without_jsonschema_s_iri_grammar(tmp_path):
    """rubric.load imports jsonschema without rfc3987_syntax (1.5 CPU s at import, for a format the schema never
    uses), and still rejects a malformed rubric; the package stays importable afterwards."""
    bad = tmp_path / "rubric.json"
    bad.write_text(json.dumps({"version": 1, "parts": {"bleu": {"checks": {"x": {"points": -1}}}}}))
    code = (
        "import sys\n"
        "from autograder.grader import rubric\n"
        "rubric.load()\n"
        "assert 'rfc3987_syntax' not in sys.modules, 'rfc3987_syntax was imported'\n"
        "try:\n"
        f"    rubric.load({str(bad)!r})\n"
        "except sys.modules['jsonschema'].ValidationError:\n"
        "    print('rejected')\n"
        "import rfc3987_syntax\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["rejected"]


def test_reference_scores_full_marks_on_every_part(reference_report):
    failed = [f"{r.part}/{r.name}: {r.output} | {r.staff_note}" for r in reference_report.results if not r.passed]
    assert not failed, "\n".join(failed)
    assert set(reference_report.part_totals()) == set(MODULES)


def test_stubs_score_zero_on_every_part_and_grading_finishes(stub_report):
    totals = stub_report.part_totals()
    assert set(totals) == set(MODULES)
    assert all(got == 0 for got, _ in totals.values()), totals
    assert all("not implemented" in r.output or "NotImplementedError" in r.output for r in stub_report.results)


def test_grading_twice_gives_identical_results(reference_report):
    # Regrading the stochastic parts (sampling, REINFORCE with its training) and one trained part is enough
    # to catch an unseeded generator; the full grade is the fixture's.
    parts = ("decoding", "show_and_tell", "reinforce")
    again = grade(ROOT / "solutions", GradeOptions(parts=parts))
    first = [(r.number, r.name, r.score, r.output) for r in reference_report.results if r.part in parts]
    assert first == [(r.number, r.name, r.score, r.output) for r in again.results]


def test_results_json_follows_gradescope_and_hides_hidden_details(stub_report, reference_report):
    for report in (stub_report, reference_report):
        document = gradescope_results(report)
        jsonschema.validate(document, SCHEMA)
        assert document["score"] == sum(t["score"] for t in document["tests"])
        for test, result in zip(document["tests"], report.results):
            assert result.part in test["tags"]
            if result.visibility == "hidden" and not result.passed:
                assert (
                    test["output"].startswith(f"failed: {result.description}")
                    or test["output"].startswith("your code raised ")
                    or "timed out" in test["output"]
                ), test["output"]
                assert "Traceback" not in test["output"] and 'File "' not in test["output"]


def test_a_missing_module_costs_only_its_part(tmp_path):
    submission = tmp_path / "submission"
    submission.mkdir()
    shutil.copy(ROOT / "solutions" / "bleu.py", submission / "bleu.py")
    report = grade(submission, GradeOptions(parts=("bleu", "decoding")))
    totals = report.part_totals()
    assert totals["bleu"][0] == totals["bleu"][1]
    assert totals["decoding"][0] == 0
    assert all(r.output == "decoding.py is missing from the submission" for r in report.results if r.part == "decoding")


SAMPLE_TOTALS = {
    "show_and_tell": (30, 30),
    "decoding": (9, 16),
    "bleu": (9, 15),
    "attention": (21, 21),
    "reinforce": (0, 21),
    "lstm_a": (5, 11),
    "stylenet": (0, 16),
}  # (points, of) by part


def test_cli_grades_the_sample_and_writes_results_json(tmp_path, capsys):
    out, report = tmp_path / "results.json", tmp_path / "report.html"
    assert cli(["demo", "--json", str(out), "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    sections = re.findall(r'<section class="part" id="part-(\w+)"', report.read_text())
    assert sections == list(MODULES) and f"wrote {report}" in printed  # tests/grader/test_report.py: what is in it
    document = json.loads(out.read_text())
    jsonschema.validate(document, SCHEMA)
    totals = {}
    for t in document["tests"]:
        part = t["tags"][0]
        got, of = totals.get(part, (0, 0))
        totals[part] = (got + t["score"], of + t["max_score"])
    # The sample's grade, pinned: a change to the grader or the sandbox that moves it is a change of what a grade
    # means (update it only with the change to the checks, the rubric or the sample that explains it).
    assert totals == SAMPLE_TOTALS, totals
    assert document["score"] == sum(got for got, _ in SAMPLE_TOTALS.values())
    assert "PASS" in printed and "FAIL" in printed and "stylenet.py is missing" in printed


def test_cli_check_runs_only_public_checks(capsys):
    assert cli(["check", str(ROOT / "solutions"), "--part", "decoding"]) == 0
    printed = capsys.readouterr().out
    public = [n for n, e in rubric_mod.load()["decoding"].items() if e.visibility == "public"]
    assert all(name in printed for name in public)
    hidden = [n for n, e in rubric_mod.load()["decoding"].items() if e.visibility == "hidden"]
    assert not any(name in printed for name in hidden)


def test_sample_submission_builds_from_the_current_sources(tmp_path):
    folder = build_sample(tmp_path / "sample")
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{m}.py" for m in MODULES if m != "stylenet")


def test_check_numbers_are_positions_in_the_full_rubric(reference_report):
    """A check has one number in every output: its position among its part's checks in the rubric, whether a run
    grades every check or the public ones only (show_and_tell's public checks are not the first seven)."""
    rubric = rubric_mod.load()["show_and_tell"]
    public = grade(ROOT / "solutions", GradeOptions(parts=("show_and_tell",), public_only=True))
    numbers = {r.name: r.number for r in reference_report.results if r.part == "show_and_tell"}
    assert [r.name for r in public.results] == [n for n, e in rubric.items() if e.visibility == "public"]
    assert [r.number for r in public.results] == [numbers[r.name] for r in public.results]
    assert [numbers[name] for name in rubric] == [f"1.{i}" for i in range(1, len(rubric) + 1)]
    assert "1.4" in [r.number for r in public.results]  # caption_loss: the third public check, the fourth in all


def before_the_due_date(document: dict) -> dict:
    """What Gradescope shows a student of results.json before the due date: the top-level output and every test
    marked "visible" (tests "after_due_date" and, while any is, the total score stay hidden)."""
    return {"output": document["output"], "tests": [t for t in document["tests"] if t["visibility"] == "visible"]}


def test_nothing_visible_before_the_due_date_depends_on_a_hidden_check():
    """A hidden check's outcome (and so anything a worker that served it could signal) reaches the student only
    after the due date: a submission that fails a hidden check sees before then what one that passes it sees."""

    def report(hidden_score: float) -> GradeReport:
        results = [
            CheckResult("bleu", "public_one", "3.1", "a public check", 1.0, 1.0, "public", "passed", 0.1),
            CheckResult(
                "bleu",
                "hidden_one",
                "3.2",
                "a hidden check",
                hidden_score,
                2.0,
                "hidden",
                "passed" if hidden_score else "failed: a hidden check",
                0.1,
            ),
        ]
        return GradeReport(results, notes=["isolation: test"])

    passes, fails = gradescope_results(report(2.0)), gradescope_results(report(0.0))
    assert passes["score"] != fails["score"]
    assert before_the_due_date(passes) == before_the_due_date(fails), (passes["output"], fails["output"])
    assert "Part 3 bleu: 1 / 1 public points" in passes["output"], passes["output"]


class _LoggedWorker:
    """A StudentWorker that only records its life (start, every call, restart, serve_hidden, pause, close) in a log
    shared by every part's worker; every call fails as student code that raised would."""

    def __init__(self, part: str, log: list[tuple[str, str]]):
        self.part, self.log = part, log
        self.alive, self.deadline, self.import_error, self.dead_reason, self.on_progress = True, None, None, None, None
        log.append((part, "start"))

    def call(self, recipe: str, timeout=None, deadline=None, evaluate=None, **kwargs):
        from autograder.public.client import StudentError

        self.log.append((self.part, "call"))
        raise StudentError("ValueError", "no")

    def restart(self) -> None:
        self.alive = True
        self.log.append((self.part, "restart"))

    def serve_hidden(self) -> None:
        self.alive = True
        self.log.append((self.part, "serve_hidden"))

    def pause(self) -> None:
        self.alive = False
        self.log.append((self.part, "pause"))

    def close(self) -> None:
        self.log.append((self.part, "close"))


def test_no_worker_given_hidden_data_runs_before_a_worker_of_public_checks(tmp_path):
    """Every part's public checks run before any part's grader's rounds or hidden checks (a worker can leave state
    on the machine that a later one reads: docs/security.md, A60): in the order of every worker's life, each part's
    first phase (up to its pause) ends before any part's second phase starts."""
    log: list[tuple[str, str]] = []
    parts = ("decoding", "attention", "bleu")
    grade(
        build_sample(tmp_path / "sub"),
        GradeOptions(parts=parts, training="without"),
        worker_factory=lambda part, *args, **kwargs: _LoggedWorker(part, log),
    )

    def second_phase_starts(part: str) -> int:
        """Where `part`'s second phase starts in the log: after its pause, or (the last part, whose second phase
        follows its first at once) at its first fresh worker."""
        events = [(i, event) for i, (p, event) in enumerate(log) if p == part]
        paused = [i for i, event in events if event == "pause"]
        return paused[0] + 1 if paused else min(i for i, event in events if event in ("restart", "serve_hidden"))

    starts = {part: second_phase_starts(part) for part in parts}
    first = [i for i, (part, _) in enumerate(log) if i < starts[part]]
    second = [i for i, (part, _) in enumerate(log) if i >= starts[part]]
    assert {event for part, event in (log[i] for i in second)} >= {"serve_hidden", "call", "close"}, log
    assert sum(event == "pause" for _, event in log) == len(parts) - 1, log  # the last part needs no pause
    assert max(first) < min(second), log
