"""`python -m autograder batch SUBMISSIONS --out DIR [--jobs N] [--force] [--reports]`: grade a whole class.

Writes DIR/<id>/results.json for every submission (Gradescope's format), DIR/grades.csv (one row per
submission, one column per part), DIR/histograms.png (the score distribution of every part) and
DIR/summary.html (distributions, the checks failed most often, every submission; autograder/report/summary.py).
With --reports, also DIR/<id>/report.html, the feedback report of each submission (autograder/report/html.py).
A run that stops part-way resumes where it stopped: a submission with a results.json (and, with --reports, a
report.html) is not graded again unless --force. One broken submission never stops the batch: it gets a row
saying why.
"""
from __future__ import annotations

import csv
import json
import multiprocessing
import re
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from autograder.intake import IntakeError, Submission, discover, unpack
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


def grade_one(submission: Submission, out: Path, report: bool = False) -> dict:
    """Grade one submission into out/<id>/results.json (and out/<id>/report.html when `report`); return its row
    for grades.csv."""
    from autograder.engine import grade
    from autograder.results import gradescope_results, write_json_atomic

    row = {"id": submission.id, "name": submission.name}
    target = out / submission.id / "results.json"
    with tempfile.TemporaryDirectory(prefix="captionkit-intake-") as tmp:
        try:
            folder = unpack(submission, Path(tmp))
        except (IntakeError, OSError) as exc:
            document = {"score": 0.0, "execution_time": 0, "output": f"could not read the submission: {exc}",
                        "tests": []}
            write_json_atomic(document, target)
            return {**row, "status": f"unreadable: {exc}"}
        graded = grade(folder)
    if report:
        from autograder.report import write_report
        write_report(graded, target.parent / "report.html", submission=submission.name or submission.id)
    write_json_atomic(gradescope_results(graded), target)
    return {**row, "status": "graded"}


def row_from_results(submission: Submission, results: Path) -> dict:
    """A grades.csv row read back from a results.json (so resumed runs and fresh ones agree)."""
    document = json.loads(results.read_text())
    row = {"id": submission.id, "name": submission.name, "total": document.get("score", 0.0)}
    for part in PARTS:
        tests = [t for t in document.get("tests", []) if part.module in t.get("tags", [])]
        row[part.module] = sum(t["score"] for t in tests) if tests else 0.0
    row["status"] = "graded" if document.get("tests") else document.get("output", "not graded")
    return row


def write_csv(rows: list[dict], path: Path) -> None:
    columns = ["id", "name", *[p.module for p in PARTS], "total", "status"]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([safe_cell(row.get(c, "")) for c in columns])


def write_histograms(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(13, 5.5))
    for ax, column in zip(axes.flat, [p.module for p in PARTS] + ["total"]):
        values = [float(r.get(column, 0.0)) for r in rows]
        ax.hist(values, bins=min(20, max(5, len(set(values)))), color="#2980b9")
        ax.set_title(column, fontsize=9)
        ax.set_xlabel("points")
    fig.suptitle(f"Score distribution per part ({len(rows)} submissions)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _done(out: Path, submission: Submission, reports: bool) -> bool:
    """Graded before: a results.json, and with `reports` a report.html unless the submission was unreadable."""
    results = out / submission.id / "results.json"
    if not results.exists():
        return False
    if not reports or (out / submission.id / "report.html").exists():
        return True
    try:
        return not json.loads(results.read_text()).get("tests")   # unreadable: there is nothing to report
    except (OSError, ValueError):
        return False


def run(submissions_root: Path, out: Path, jobs: int = 1, force: bool = False, reports: bool = False) -> list[dict]:
    """Grade every submission under `submissions_root` into `out`; return the grades.csv rows. reports: also write
    each submission's feedback report."""
    out.mkdir(parents=True, exist_ok=True)
    submissions = discover(submissions_root)
    todo = [s for s in submissions if force or not _done(out, s, reports)]
    if force:
        for s in todo:
            shutil.rmtree(out / s.id, ignore_errors=True)
    failures = {}
    with tqdm(total=len(submissions), initial=len(submissions) - len(todo), unit="submission") as bar:
        if jobs <= 1:
            for s in todo:
                failures.update(_guarded(s, out, reports))
                bar.update()
        else:
            # "spawn", not fork: each process starts clean, claims its own sandbox user, inherits no grader state.
            with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
                futures = {pool.submit(_guarded, s, out, reports): s for s in todo}
                for future in as_completed(futures):
                    failures.update(future.result())
                    bar.update()
    rows = []
    for s in submissions:
        results = out / s.id / "results.json"
        if results.exists():
            rows.append(row_from_results(s, results))
        else:
            rows.append({"id": s.id, "name": s.name, "status": f"grader error: {failures.get(s.id, 'no results')}"})
    write_csv(rows, out / "grades.csv")
    write_histograms(rows, out / "histograms.png")
    from autograder.report import write_summary
    write_summary(rows, out)
    return rows


def _guarded(submission: Submission, out: Path, reports: bool = False) -> dict:
    """grade_one, with any failure of the grader itself recorded instead of raised."""
    try:
        grade_one(submission, out, reports)
        return {}
    except Exception as exc:  # never let one submission stop the batch
        return {submission.id: f"{type(exc).__name__}: {exc}"[:300]}
