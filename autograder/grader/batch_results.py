"""What a batch finds and writes in its output folder, per submission: whether it was graded before (`_done`, the
tests of its results.json), its documents written (`_store`, merged into the earlier results.json with --part), the
results of a submission that could not be read (`_unreadable`); and the histograms of the class's scores.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.grader.grades_table import maxima, owner_only
from autograder.grader.intake import Submission
from shared.parts import PARTS


def write_histograms(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.grader.results import was_graded

    top = maxima()
    fig, axes = plt.subplots(2, 4, figsize=(13, 5.5))
    for ax, column in zip(axes.flat, [p.module for p in PARTS] + ["total"]):
        values = [float(r.get(column, 0.0)) for r in rows if was_graded(r)]
        # On [0, the column's maximum] whatever the scores (all zero included), bars outlined so neighbours show.
        ax.hist(
            values,
            bins=min(20, max(5, int(top[column]))),
            range=(0, top[column]),
            color="#2980b9",
            edgecolor="white",
            linewidth=0.8,
        )
        ax.set_xlim(0, top[column])
        ax.set_title(f"{column} (of {top[column]:g})", fontsize=9)
        ax.set_xlabel("points")
    fig.suptitle(f"Score distribution per part ({len(rows)} submissions)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _graded_tests(out: Path, submission: Submission) -> list | None:
    """The tests of the submission's results.json; None without one (or when it cannot be read, or holds no object
    with a list of tests: graded in full again)."""
    try:
        document = json.loads((out / submission.id / "results.json").read_text())
    except (OSError, ValueError):
        return None
    tests = document.get("tests") if isinstance(document, dict) else None
    return tests if isinstance(tests, list) else None


def _done(out: Path, submission: Submission, reports: bool) -> bool:
    """Graded before: a results.json, and with `reports` a report.html unless the submission was unreadable."""
    results = out / submission.id / "results.json"
    if not results.exists():
        return False
    if not reports or (out / submission.id / "report.html").exists():
        return True
    return _graded_tests(out, submission) == []  # unreadable: there is nothing to report


def _store(out: Path, submission: Submission, outcome: dict, merge: tuple[str, ...] | None = None) -> None:
    """Write what grade_job returned into out/<id>/; with `merge`, into the results.json graded before."""
    from autograder.grader.results import merge_results, write_json_atomic
    from autograder.grader.staff import STAFF_FILE, batch_staff_path, merged_text, write_staff

    folder = out / submission.id
    staff_path = batch_staff_path(out, submission.id)
    # Where a batch of an earlier kit wrote the staff view, beside the student's report: read for a merge, removed.
    legacy = folder / STAFF_FILE
    document = outcome["results"]
    staff = outcome.get("staff")
    if merge and not outcome.get("stopped"):  # a grade the watchdog stopped replaces the results: nothing to merge
        old = json.loads((folder / "results.json").read_text())
        document = merge_results(old, document, merge)
        earlier = staff_path if staff_path.is_file() else legacy
        if staff is not None and earlier.is_file():
            staff = merged_text(earlier.read_text(encoding="utf-8"), staff, merge)
        # The report drew every part from one run; it no longer matches (`batch --reports` grades it afresh).
        (folder / "report.html").unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    owner_only(folder)
    if outcome.get("report") is not None:
        (folder / "report.html").write_text(outcome["report"], encoding="utf-8")
        owner_only(folder / "report.html")
    if staff is not None:
        write_staff(staff, staff_path)
        owner_only(staff_path.parent)
        legacy.unlink(missing_ok=True)
    write_json_atomic(document, folder / "results.json")  # mkstemp: 0600


def _unreadable(out: Path, submission: Submission, reason: str) -> None:
    from autograder.grader.results import write_json_atomic

    document = {"score": 0.0, "execution_time": 0, "output": f"could not read the submission: {reason}", "tests": []}
    write_json_atomic(document, out / submission.id / "results.json")
