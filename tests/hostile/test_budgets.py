"""What one submission can make the grading process itself do (docs/security.md A50, A51): a reply that is small on
the pipe and huge as a tree is refused within its budget; a batch ends a submission whose grading outlasts its
watchdog and grades the rest, inline, in a pool and on a dask cluster; a submission that cannot be read gets a
results.json with 0 and the reason, on Gradescope and in a batch."""

from __future__ import annotations

import dataclasses
import json
import time
import zipfile
from pathlib import Path

import pytest

from autograder.grader import batch, grades_table
from autograder.grader.results import was_graded
from autograder.public import limits
from tests.grader.test_cluster import cluster  # noqa: F401 (the fixture: a real dask scheduler and two workers)
from tests.hostile import harness
from tests.hostile.harness import ROOT, assert_contained, build, run_grade
from tests.hostile.test_hostile import BOUND, FIRST

OVER_BUDGET = "sent a reply over the grader's budget: it holds a list, tuple or dict in two places"


# -- A50: a reply that unfolds ------------------------------------------------------------------------------------


def test_A50_a_reply_huge_as_a_tree_is_refused_within_its_budget(tmp_path):
    """The worker answers the grader's call with 476 bytes that unfold into 8 ** 19 numbers (lists that share the list
    below). Read as it was written, the grading process walked it for as long as one let it; refused, the check fails
    at once and says why, and so does every check of the part after it (no fresh worker is started for the part)."""
    graded = run_grade(build("A50_shared_reply_graph", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    first = graded.result(FIRST)
    assert not first.passed and first.output == OVER_BUDGET, first.output
    assert graded.total("bleu")[0] == 0, graded.describe()
    assert {r.output for r in graded.results("bleu")} == {OVER_BUDGET}, graded.describe()


# -- the batch's watchdog -----------------------------------------------------------------------------------------

# Seconds: far below the submission's time limit, whose deadline would otherwise end the grade, and time enough for
# the reference's Part 3 on a loaded machine.
WATCHDOG = 45.0


@pytest.fixture
def long_start_up(monkeypatch):
    """A start-up limit of 600 s: the grader waits that long for a_stalls's import (the grading process is given the
    limits of the process that starts it; a dask worker's are its own: 240 s under the suite's time scale)."""
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, startup=600.0))


def stalling_class(root: Path) -> Path:
    """a_stalls, whose grade does not end before the watchdog (its import never ends, and the grader waits for it
    up to the start-up limit), and b_next, the reference bleu.py."""
    build("F15_heavy_import", root / "a_stalls")
    (root / "b_next").mkdir(parents=True)
    (root / "b_next" / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text())
    return root


def assert_stopped_and_the_rest_graded(out: Path, rows: list[dict], started: float) -> None:
    stopped = json.loads((out / "a_stalls" / "results.json").read_text())
    assert stopped["score"] == 0 and stopped["tests"] == [], stopped
    assert stopped["output"].startswith(f"grader stopped after {WATCHDOG:.0f} s"), stopped["output"]
    by_id = {r["id"]: r for r in rows}
    assert by_id["a_stalls"]["status"].startswith(f"grader stopped after {WATCHDOG:.0f} s"), by_id["a_stalls"]
    assert was_graded(by_id["b_next"]) and float(by_id["b_next"]["bleu"]) == grades_table.maxima()["bleu"], rows
    assert (out / "grades.csv").is_file()
    assert not harness.sandbox_processes(), harness.sandbox_processes()
    assert time.monotonic() - started < 400


# inline: again with Docker's default capabilities (no PID namespace: the grading process's workers are ended one by
# one, then swept)
@pytest.mark.parametrize("jobs", [pytest.param(1, id="inline", marks=pytest.mark.caps), pytest.param(2, id="pool")])
def test_a_batch_stops_a_grade_past_its_watchdog_and_grades_the_rest(tmp_path, jobs, long_start_up, temporary_folder):
    submissions, out = stalling_class(tmp_path / "submissions"), tmp_path / "out"
    started = time.monotonic()
    rows = batch.run(submissions, out, jobs=jobs, watchdog=WATCHDOG)
    assert_stopped_and_the_rest_graded(out, rows, started)
    # The stopped grade was killed before it could remove its folders (its scratch folder with the hidden inputs'
    # copies, the submission it was given, hypothesis's cache): the batch removes them. What a batch worker keeps for
    # as long as it runs (its template) is not the grade's.
    left = sorted(p.name for p in temporary_folder.iterdir() if not p.name.startswith("captionkit-template-"))
    assert left == [], left


def test_a_cluster_batch_stops_a_grade_past_its_watchdog_and_grades_the_rest(
    tmp_path,
    cluster,  # noqa: F811
    long_start_up,
):
    address, _ = cluster
    submissions, out = stalling_class(tmp_path / "submissions"), tmp_path / "out"
    started = time.monotonic()
    rows = batch.run(submissions, out, scheduler=address, watchdog=WATCHDOG)
    assert_stopped_and_the_rest_graded(out, rows, started)


# -- A51: a submission that cannot be read ------------------------------------------------------------------------


def unreadable_zips() -> dict[str, dict[str, bytes]]:
    """Zips whose extraction fails in the file system: a name that is a file and a folder, a 300-character name."""
    reference = (ROOT / "solutions" / "bleu.py").read_bytes()
    return {
        "file_and_folder": {"x": b"a file", "x/bleu.py": reference},
        "long_name": {"a" * 300 + "/bleu.py": reference, "bleu.py": reference},
    }


def write_zip(path: Path, entries: dict[str, bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return path


def said_encrypted(path: Path) -> Path:
    """The zip at `path` with its entries marked encrypted (general purpose flag bit 0, in the local and the central
    headers): zipfile then asks for a password, and raises RuntimeError without one."""
    data = bytearray(path.read_bytes())
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = data.find(signature)
        while start >= 0:
            data[start + flags_at] |= 0x1
            start = data.find(signature, start + 4)
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as zf, pytest.raises(RuntimeError, match="encrypted"):
        zf.read("bleu.py")
    return path


@pytest.mark.parametrize("case", sorted(unreadable_zips()))
def test_A51_gradescope_reports_a_submission_it_cannot_read(tmp_path, case):
    from autograder.grader import gradescope

    root = tmp_path / "autograder"
    write_zip(root / "submission" / "work.zip", unreadable_zips()[case])
    (root / "results").mkdir()
    gradescope.run(root)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0, results
    assert "could not read work.zip" in results["output"], results["output"]


def test_A51_a_batch_reports_each_submission_it_cannot_read_and_grades_the_rest(tmp_path):
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    for case, entries in unreadable_zips().items():
        write_zip(submissions / f"{case}.zip", entries)
    said_encrypted(write_zip(submissions / "encrypted.zip", {"bleu.py": b"x = 1"}))
    (submissions / "z_next").mkdir()
    (submissions / "z_next" / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text())
    rows = {r["id"]: r for r in batch.run(submissions, out)}
    for case in (*unreadable_zips(), "encrypted"):
        results = json.loads((out / case / "results.json").read_text())
        assert results["score"] == 0 and results["output"].startswith("could not read the submission: "), results
        assert rows[case]["status"] == results["output"], rows[case]
    assert float(rows["z_next"]["bleu"]) == grades_table.maxima()["bleu"], rows["z_next"]
