"""TA batch grading: the accepted layouts, safe extraction, resuming, a safe CSV, and one broken
submission never stopping the batch. Submissions hold only bleu.py (Part 3 grades in seconds)."""
import csv
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from autograder import batch
from autograder.intake import IntakeError, discover, extract_zip, module_folder

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
