"""TA batch grading: the accepted layouts, safe extraction, resuming, a safe CSV, and one broken
submission never stopping the batch. Submissions hold only bleu.py (Part 3 grades in seconds)."""
import csv
import html
import json
import os
import re
import stat
import zipfile
from pathlib import Path

import pytest

from autograder import batch
from autograder import rubric as rubric_mod
from autograder.intake import IntakeError, Submission, discover, extract_zip, module_folder
from shared.parts import MODULES

pytestmark = pytest.mark.xdist_group("batch")  # one worker builds the shared fixture

ROOT = Path(__file__).resolve().parents[1]
REFERENCE, STUB = ROOT / "solutions" / "bleu.py", ROOT / "assignments" / "bleu.py"


def zip_with(path: Path, entries: dict[str, bytes], links: dict[str, str] = {}) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        for name, target in links.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    (root / "alice").mkdir()
    (root / "alice" / "bleu.py").write_text(REFERENCE.read_text())
    (root / "=HYPERLINK(1)").mkdir()
    (root / "=HYPERLINK(1)" / "bleu.py").write_text(STUB.read_text())
    zip_with(root / "bob.zip", {"work/bleu.py": REFERENCE.read_bytes()})
    zip_with(root / "mallory.zip", {"../../escape.py": b"x = 1"})
    zip_with(root / "trudy.zip", {"bleu.py": b""}, links={"decoding.py": "/etc/passwd"})
    (root / "carol.zip").write_bytes(b"this is not a zip")
    out = tmp_path_factory.mktemp("out")
    rows = batch.run(root, out, jobs=2)
    return root, out, {r["id"]: r for r in rows}


def test_every_submission_gets_a_row_and_results(graded):
    root, out, rows = graded
    assert set(rows) == {"alice", "=HYPERLINK(1)", "bob", "mallory", "trudy", "carol"}
    assert rows["alice"]["bleu"] == rows["bob"]["bleu"] == 15 and rows["alice"]["total"] == 15, \
        [t["output"] for t in json.loads((out / "alice" / "results.json").read_text())["tests"] if t["score"] < t["max_score"]
         and "bleu" in t["tags"]]
    assert rows["=HYPERLINK(1)"]["bleu"] == 0
    for key in rows:
        assert (out / key / "results.json").is_file()
    assert (out / "histograms.png").stat().st_size > 0


def test_unsafe_zips_are_refused_and_nothing_escapes(graded):
    root, out, rows = graded
    assert "unsafe path" in rows["mallory"]["status"] and rows["mallory"]["total"] == 0
    assert "links and special files" in rows["trudy"]["status"]
    assert "not a valid zip" in rows["carol"]["status"]
    assert not (root.parent / "escape.py").exists() and not (out.parent / "escape.py").exists()


def test_the_csv_cannot_run_formulas(graded):
    _, out, _ = graded
    with open(out / "grades.csv", newline="") as f:
        table = list(csv.reader(f))
    assert table[0][:3] == ["id", "name", "show_and_tell"]
    ids = [row[0] for row in table[1:]]
    assert "'=HYPERLINK(1)" in ids
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in table for cell in row)


def test_a_second_run_resumes_and_force_regrades(graded, tmp_path):
    root, out, _ = graded
    before = {p: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    batch.run(root, out)
    assert before == {p: p.stat().st_mtime_ns for p in out.glob("*/results.json")}, "resume regraded something"
    os.remove(out / "alice" / "results.json")
    batch.run(root, out)
    assert (out / "alice" / "results.json").exists()
    assert all(before[p] == p.stat().st_mtime_ns for p in before if p.parent.name != "alice")


def test_gradescope_export_layout_names_the_submitters(tmp_path):
    (tmp_path / "submission_101").mkdir()
    (tmp_path / "submission_101" / "bleu.py").write_text("x = 1")
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_101:\n  :submitters:\n  - :name: Ada Lovelace\n    :email: ada@example.org\n")
    [sub] = discover(tmp_path)
    assert (sub.id, sub.name) == ("submission_101", "Ada Lovelace")


def test_extraction_limits_and_nested_folders(tmp_path):
    big = zip_with(tmp_path / "big.zip", {f"f{i}.py": b"" for i in range(250)})
    with pytest.raises(IntakeError, match="entries; the limit is"):
        extract_zip(big, tmp_path / "big")
    nested = extract_zip(zip_with(tmp_path / "n.zip", {"a/b/bleu.py": b"", "__MACOSX/a/bleu.py": b""}), tmp_path / "n")
    assert module_folder(nested) == tmp_path / "n" / "a" / "b"
    assert batch.safe_cell("-1+2") == "'-1+2" and batch.safe_cell(3.5) == "3.5" and batch.safe_cell("a\x00b") == "ab"


def test_the_summary_shows_distributions_the_most_failed_checks_and_every_submission(graded, tmp_path):
    from tests import browser
    from tests.test_report import structure

    _, out, rows = graded
    text = (out / "summary.html").read_text()
    ids = [html.unescape(i) for i in re.findall(r'<tr class="submission" data-id="([^"]*)"', text)]
    assert sorted(ids) == sorted(rows)
    assert "unsafe path" in text and "not a valid zip" in text
    graded_ids = [i for i, r in rows.items() if r["status"] == "graded"]
    failed = re.findall(r'<tr data-check-number="[^"]*"><td class="num">[^<]*</td><td>([^<]*)</td>'
                        r'<td class="num">(\d+)</td><td class="num">(\d+)%</td>', text)
    assert failed and len(failed) <= 15
    # Only bleu.py was submitted: every check of the other parts failed for everyone, first in the table.
    assert all(int(n) == len(graded_ids) and p == "100" for _, n, p in failed)
    assert all("(bleu)" not in name for name, _, _ in failed)
    # Part 3: the stub fails every check, the two references none.
    from autograder.report.summary import failed_checks
    documents = [json.loads((out / i / "results.json").read_text()) for i in graded_ids]
    bleu = [(e["failed"], e["graded"]) for e in failed_checks(documents) if "(bleu)" in e["name"]]
    assert len(bleu) == len(rubric_mod.load()["bleu"]) and set(bleu) == {(1, len(graded_ids))}
    assert len(structure(text).sources) == 1 and "report.html" not in text    # a histogram; no reports asked for
    rendered = browser.render(out / "summary.html", tmp_path)
    assert rendered.get("data-rendered") == "ok" and rendered.get("data-images") == "1", rendered


def test_feedback_reports_on_request_are_linked_from_the_summary(tmp_path):
    from tests.test_report import structure

    root, out = tmp_path / "class", tmp_path / "out"
    hostile = "<img src=x onerror=alert(1)>eve"
    (root / hostile).mkdir(parents=True)
    (root / hostile / "bleu.py").write_text(REFERENCE.read_text())
    [row] = batch.run(root, out, reports=True)
    assert row["id"] == hostile and row["bleu"] == 15
    assert list(structure((out / hostile / "report.html").read_text()).parts) == list(MODULES)
    summary = (out / "summary.html").read_text()
    assert ('<a href="%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3Eeve/report.html">'
            '&lt;img src=x onerror=alert(1)&gt;eve</a>') in summary
    assert hostile not in summary


def test_a_batch_asked_for_reports_regrades_only_what_lacks_one(tmp_path):
    graded, unreadable = Submission("ada", "", tmp_path), Submission("carol", "", tmp_path)
    for s, tests in ((graded, [{"score": 1}]), (unreadable, [])):
        (tmp_path / s.id).mkdir()
        (tmp_path / s.id / "results.json").write_text(json.dumps({"score": 0, "tests": tests}))
    assert batch._done(tmp_path, graded, reports=False)
    assert not batch._done(tmp_path, graded, reports=True)          # graded before without its report
    assert batch._done(tmp_path, unreadable, reports=True)          # nothing to report on
    (tmp_path / "ada" / "report.html").write_text("<!doctype html>")
    assert batch._done(tmp_path, graded, reports=True)
    assert not batch._done(tmp_path, Submission("dan", "", tmp_path), reports=False)
