"""TA batch grading: the accepted layouts, safe extraction, resuming, a safe CSV, and one broken
submission never stopping the batch. Submissions hold only bleu.py (Part 3 grades in seconds)."""

import csv
import html
import json
import os
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.grader import batch, batch_jobs, batch_results, batch_worker, grades_table
from autograder.grader import rubric as rubric_mod
from autograder.grader.intake import IntakeError, Submission, discover, extract_zip, module_folder
from autograder.grader.results import was_graded
from shared.parts import MODULES

pytestmark = pytest.mark.xdist_group("batch")  # one worker builds the shared fixture

ROOT = Path(__file__).resolve().parents[2]
REFERENCE, STUB = ROOT / "solutions" / "bleu.py", ROOT / "assignments" / "bleu.py"


def zip_with(path: Path, entries: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    links = links or {}
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
    (root / "erin").mkdir()  # an empty submission
    (root / "erin" / "notes.txt").write_text("nothing to grade")
    out = tmp_path_factory.mktemp("out")
    rows = batch.run(root, out, jobs=2)
    return root, out, {r["id"]: r for r in rows}


def test_every_submission_gets_a_row_and_results(graded):
    root, out, rows = graded
    assert set(rows) == {"alice", "=HYPERLINK(1)", "bob", "mallory", "trudy", "carol", "erin"}
    assert rows["alice"]["bleu"] == rows["bob"]["bleu"] == 15 and rows["alice"]["total"] == 15, [
        t["output"]
        for t in json.loads((out / "alice" / "results.json").read_text())["tests"]
        if t["score"] < t["max_score"] and "bleu" in t["tags"]
    ]
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
    assert table[0][:4] == ["id", "name", "submitted", "show_and_tell"]
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
        "submission_101:\n  :submitters:\n  - :name: Ada Lovelace\n    :email: ada@example.org\n"
    )
    [sub] = discover(tmp_path)
    assert (sub.id, sub.name) == ("submission_101", "Ada Lovelace")


def test_extraction_limits_and_nested_folders(tmp_path):
    big = zip_with(tmp_path / "big.zip", {f"f{i}.py": b"" for i in range(250)})
    with pytest.raises(IntakeError, match="entries; the limit is"):
        extract_zip(big, tmp_path / "big")
    nested = extract_zip(zip_with(tmp_path / "n.zip", {"a/b/bleu.py": b"", "__MACOSX/a/bleu.py": b""}), tmp_path / "n")
    assert module_folder(nested) == tmp_path / "n" / "a" / "b"
    assert (
        grades_table.safe_cell("-1+2") == "'-1+2"
        and grades_table.safe_cell(3.5) == "3.5"
        and grades_table.safe_cell("a\x00b") == "ab"
    )


def test_the_summary_shows_distributions_the_most_failed_checks_and_every_submission(graded, tmp_path):
    from tests import browser
    from tests.grader.test_report import structure

    _, out, rows = graded
    text = (out / "summary.html").read_text()
    ids = [html.unescape(i) for i in re.findall(r'<tr class="submission" data-id="([^"]*)"', text)]
    assert sorted(ids) == sorted(rows)
    assert "unsafe path" in text and "not a valid zip" in text
    graded_ids = [i for i, r in rows.items() if was_graded(r)]
    failed = re.findall(
        r'<tr data-check-number="[^"]*"><td class="num">[^<]*</td><td>([^<]*)</td>'
        r'<td class="num">(\d+)</td><td class="num">(\d+)%</td>',
        text,
    )
    # Only bleu.py was submitted: the other parts count as modules not submitted, not as failed checks; of Part 3's
    # checks, the stub fails every one, the two references none (the empty submission holds no bleu.py).
    assert failed and all("(bleu)" in name for name, _, _ in failed), failed
    assert len(failed) == len(rubric_mod.load()["bleu"]) and {(n, p) for _, n, p in failed} == {("1", "33")}
    missing = dict(re.findall(r'<tr data-module="(\w+)"><td>\w+\.py</td><td class="num">(\d+)</td>', text))
    assert missing == {**{m: str(len(graded_ids)) for m in MODULES if m != "bleu"}, "bleu": "1"}, missing
    from autograder.grader.report.summary import failed_checks

    documents = [json.loads((out / i / "results.json").read_text()) for i in graded_ids]
    bleu = [(e["failed"], e["graded"]) for e in failed_checks(documents) if "(bleu)" in e["name"]]
    assert len(bleu) == len(rubric_mod.load()["bleu"]) and set(bleu) == {(1, 3)}
    assert len(structure(text).sources) == 1 and "report.html" not in text  # a histogram; no reports asked for
    assert '<a class="staff" href="staff/alice.txt">staff view</a>' in text
    rendered = browser.render(out / "summary.html", tmp_path)
    assert rendered.get("data-rendered") == "ok" and rendered.get("data-images") == "1", rendered


def test_feedback_reports_on_request_are_linked_from_the_summary(tmp_path):
    from tests.grader.test_report import structure

    root, out = tmp_path / "class", tmp_path / "out"
    hostile = "<img src=x onerror=alert(1)>eve"
    (root / hostile).mkdir(parents=True)
    (root / hostile / "bleu.py").write_text(REFERENCE.read_text())
    [row] = batch.run(root, out, reports=True)
    assert row["id"] == hostile and row["bleu"] == 15
    assert list(structure((out / hostile / "report.html").read_text()).parts) == list(MODULES)
    summary = (out / "summary.html").read_text()
    assert (
        '<a href="%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3Eeve/report.html">'
        "&lt;img src=x onerror=alert(1)&gt;eve</a>"
    ) in summary
    assert hostile not in summary


def test_a_batch_asked_for_reports_regrades_only_what_lacks_one(tmp_path):
    graded, unreadable = Submission("ada", "", tmp_path), Submission("carol", "", tmp_path)
    for s, tests in ((graded, [{"score": 1}]), (unreadable, [])):
        (tmp_path / s.id).mkdir()
        (tmp_path / s.id / "results.json").write_text(json.dumps({"score": 0, "tests": tests}))
    assert batch_results._done(tmp_path, graded, reports=False)
    assert not batch_results._done(tmp_path, graded, reports=True)  # graded before without its report
    assert batch_results._done(tmp_path, unreadable, reports=True)  # nothing to report on
    (tmp_path / "ada" / "report.html").write_text("<!doctype html>")
    assert batch_results._done(tmp_path, graded, reports=True)
    assert not batch_results._done(tmp_path, Submission("dan", "", tmp_path), reports=False)


def test_part_regrades_one_part_and_merges_it_into_the_results(graded, tmp_path):
    """--part bleu after a fix: Part 3 regraded and merged; the document is the one a full grade writes."""
    _, out, _ = graded
    root, merged = tmp_path / "class", tmp_path / "out"
    (root / "alice").mkdir(parents=True)
    (root / "alice" / "bleu.py").write_text(STUB.read_text())
    [first] = batch.run(root, merged)
    assert first["bleu"] == 0
    (root / "alice" / "bleu.py").write_text(REFERENCE.read_text())
    [row] = batch.run(root, merged, parts=("bleu",))
    assert row["bleu"] == 15 and row["total"] == 15
    document, full = (json.loads((o / "alice" / "results.json").read_text()) for o in (merged, out))
    for d in (document, full):
        d.pop("execution_time")
        d["output"] = re.sub(r"captionkit-sandbox(-\d+)?", "captionkit-sandbox", d["output"])
    assert document == full
    staff = (merged / "staff" / "alice.txt").read_text()  # the staff view merged too: Part 3 passes now
    assert "merged into the earlier grade" in staff and " bleu." not in staff and "\n2.1 decoding." in staff


def test_part_keeps_the_other_parts_and_grades_new_submissions_in_full(tmp_path):
    root, out = tmp_path / "class", tmp_path / "out"
    (root / "ada").mkdir(parents=True)
    (root / "ada" / "bleu.py").write_text(REFERENCE.read_text())
    kept = {
        "name": "Part 2 (decoding): kept",
        "number": "2.1",
        "score": 1.0,
        "max_score": 1.0,
        "status": "passed",
        "visibility": "visible",
        "output": "passed",
        "tags": ["decoding", "public"],
    }
    replaced = {
        **kept,
        "name": "Part 3 (bleu): graded before the fix",
        "number": "3.1",
        "score": 0.0,
        "status": "failed",
        "tags": ["bleu", "public"],
    }
    (out / "ada").mkdir(parents=True)
    (out / "ada" / "results.json").write_text(
        json.dumps({"score": 1.0, "execution_time": 1, "output": "", "tests": [kept, replaced]})
    )
    (out / "ada" / "report.html").write_text("<!doctype html>")
    (root / "ben").mkdir()
    (root / "ben" / "bleu.py").write_text(REFERENCE.read_text())
    rows = {r["id"]: r for r in batch.run(root, out, parts=("bleu",))}
    assert rows["ada"]["decoding"] == 1 and rows["ada"]["bleu"] == 15 and rows["ada"]["total"] == 16
    ada = json.loads((out / "ada" / "results.json").read_text())
    assert (
        replaced not in ada["tests"]
        and ada["tests"][0] == kept
        and {m for t in ada["tests"] for m in t["tags"]} - {"public", "hidden"} == {"decoding", "bleu"}
    )
    public = sum(e.points for e in rubric_mod.load()["bleu"].values() if e.visibility == "public")
    assert (
        f"Part 2 decoding: 1 / 1 public points\nPart 3 bleu: {public:g} / {public:g} public points; "
        f"{15 - public:g} more from hidden and training checks, shown after the due date"
    ) in ada["output"]
    assert not (out / "ada" / "report.html").exists(), "a report drawn before the regrade would disagree with it"
    ben = json.loads((out / "ben" / "results.json").read_text())  # not graded before: graded in full
    assert {m for t in ben["tests"] for m in t["tags"]} >= set(MODULES)


def test_part_goes_without_force_and_reports(tmp_path):
    for flags in ({"force": True}, {"reports": True}):
        with pytest.raises(ValueError, match="--part"):
            batch.run(tmp_path, tmp_path / "out", parts=("bleu",), **flags)


def test_a_job_carries_the_module_files_as_staging_finds_them(tmp_path):
    from autograder.public.staging import MAX_MODULE_BYTES, StagingError, stage

    source = tmp_path / "source"
    source.mkdir()
    (source / "bleu.py").write_text("x = 1")
    (source / "decoding.py").symlink_to(REFERENCE)
    (source / "attention.py").mkdir()
    with open(source / "reinforce.py", "wb") as f:
        f.truncate(5 * MAX_MODULE_BYTES)
    (source / "notes.txt").write_text("not a module")
    files = batch_jobs.snapshot(source)
    assert set(files) == {"bleu.py", "decoding.py", "attention.py", "reinforce.py"}
    assert (
        files["reinforce.py"][2] == 5 * MAX_MODULE_BYTES and len(files["reinforce.py"][1]) == batch_jobs.CARRIED_BYTES
    )
    copy = batch_jobs.materialise(files, tmp_path / "copy")
    for module in ("bleu", "decoding", "attention", "reinforce", "stylenet"):
        outcomes = []
        for folder in (source, copy):
            try:
                outcomes.append((stage(module, folder, tmp_path / "staging" / module) / f"{module}.py").read_text())
            except StagingError as exc:
                outcomes.append(str(exc))
        assert outcomes[0] == outcomes[1], module
    with pytest.raises(ValueError, match="not a module file name"):
        batch_jobs.materialise({"../bleu.py": ("file", b"", 0)}, tmp_path / "escape")


def test_a_worker_with_another_kit_refuses_to_grade(tmp_path):
    job = batch_jobs.Job("ada", "", {}, None, False, kit="0" * 64)
    with pytest.raises(batch_jobs.KitMismatch, match="install the same kit and hidden seed"):
        batch_worker.grade_job(job)


def test_the_kit_fingerprint_follows_the_hidden_seed(monkeypatch):
    before = batch_jobs.kit_fingerprint()
    monkeypatch.setenv("CAPTIONKIT_HIDDEN_SEED", "12345")
    assert batch_jobs.kit_fingerprint() != before


def test_batch_runs_without_dask_and_says_what_scheduler_needs(tmp_path):
    """dask is an optional extra: with it unimportable, a local batch works and --scheduler says what to install."""
    root = tmp_path / "class"
    (root / "ada").mkdir(parents=True)
    (root / "ada" / "bleu.py").write_text(REFERENCE.read_text())
    blocked = (
        "import sys; sys.modules.update(dict.fromkeys(['dask', 'distributed'])); "
        "from autograder.__main__ import main; sys.exit(main(sys.argv[1:]))"
    )
    command = [sys.executable, "-c", blocked, "batch", str(root), "--out", str(tmp_path / "out")]
    local = subprocess.run(command + ["--part", "bleu"], capture_output=True, text=True, cwd=ROOT)
    assert local.returncode == 0 and "graded 1 of 1" in local.stdout, local.stdout + local.stderr
    cluster = subprocess.run(command + ["--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True, cwd=ROOT)
    assert cluster.returncode == 2 and 'pip install -e ".[cluster]"' in cluster.stderr, cluster.stderr


def test_statuses_say_what_was_submitted_and_names_come_from_the_folder(graded):
    """An empty submission and a partial one are not "graded" like a real zero: the status and the `submitted`
    column say what was there; a plain folder's name is the folder's."""
    _, out, rows = graded
    assert rows["erin"]["status"] == "empty submission" and rows["erin"]["submitted"] == 0
    others = ", ".join(m for m in MODULES if m != "bleu")
    assert rows["alice"]["status"] == f"missing: {others}" and rows["alice"]["submitted"] == 1
    assert rows["alice"]["name"] == "alice" and rows["bob"]["name"] == "bob"
    with open(out / "grades.csv", newline="") as f:
        table = {row["id"]: row for row in csv.DictReader(f)}
    assert (table["erin"]["status"], table["erin"]["submitted"]) == ("empty submission", "0")
    assert table["alice"]["status"] == f"missing: {others}"
    with open(out / "grades-maxima.csv", newline="") as f:
        [maxima] = list(csv.DictReader(f))
    points = {part: sum(e.points for e in entries.values()) for part, entries in rubric_mod.load().items()}
    assert maxima["id"] == "maximum" and float(maxima["bleu"]) == points["bleu"] == 15
    assert float(maxima["total"]) == sum(points.values()) and maxima["submitted"] == str(len(MODULES))


def test_the_histograms_span_each_maximum_even_when_everyone_scored_zero(tmp_path, monkeypatch):
    import matplotlib.axes

    spans = []
    real_hist = matplotlib.axes.Axes.hist

    def hist(self, values, *args, **kwargs):
        spans.append((kwargs.get("range"), kwargs.get("edgecolor")))
        return real_hist(self, values, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "hist", hist)
    rows = [{"id": "a", "status": "empty submission", "total": 0.0, **{m: 0.0 for m in MODULES}}]
    batch_results.write_histograms(rows, tmp_path / "h.png")
    top = grades_table.maxima()
    assert [r for r, _ in spans] == [(0, top[m]) for m in [*MODULES, "total"]]
    assert all(edge is not None for _, edge in spans)


def test_each_submission_has_a_staff_view_for_the_staff_alone(graded):
    """DIR/staff/<id>.txt: every failed check with what the student saw and the staff's detail, owner-only, in a
    folder of its own: a submission's folder DIR/<id>/, handed out whole, holds no staff view."""
    _, out, rows = graded
    staff = out / "staff" / "=HYPERLINK(1).txt"
    assert stat.S_IMODE(staff.stat().st_mode) == 0o600 and stat.S_IMODE(staff.parent.stat().st_mode) == 0o700
    for key in rows:
        assert {p.name for p in (out / key).iterdir()} <= {"results.json", "report.html"}, key
    text = staff.read_text()
    full = sum(e.points for checks in rubric_mod.load().values() for e in checks.values())
    assert text.startswith(f"Staff view of =HYPERLINK(1): 0 / {full:g}") and "Never give this file to a student" in text
    assert "3.1 bleu.ngram_counts_is_the_counter_of_ngrams (public, 0 of 1)" in text
    assert re.search(r"3\.\d+ bleu\.\w+ \(hidden, 0 of \d+\)", text), text[:3000]
    assert 'File "bleu.py", line' in text  # the traceback in the student's file


def test_a_staff_view_an_earlier_kit_wrote_beside_the_report_is_moved_out(tmp_path):
    """A batch folder of an earlier kit held DIR/<id>/staff.txt: storing that submission again moves its staff view
    to DIR/staff/<id>.txt (merging a regraded part into it) and leaves none in DIR/<id>/."""
    ada = Submission("ada", "", tmp_path)
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "results.json").write_text(json.dumps({"score": 0, "tests": []}))
    (tmp_path / "ada" / "staff.txt").write_text("Staff view of ada\n\n2.1 decoding.greedy (public, 0 of 2): ...\n")
    batch_results._store(
        tmp_path, ada, {"results": {"score": 0, "tests": []}, "staff": "Staff view of ada\n"}, merge=("bleu",)
    )
    assert not (tmp_path / "ada" / "staff.txt").exists()
    moved = tmp_path / "staff" / "ada.txt"
    assert "2.1 decoding.greedy" in moved.read_text() and stat.S_IMODE(moved.stat().st_mode) == 0o600
