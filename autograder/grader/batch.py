"""`python -m autograder batch SUBMISSIONS --out DIR [--jobs N | --scheduler ADDRESS] [--part P ...] [--force]
[--reports]`: grade a whole class.

Writes DIR/<id>/results.json for every submission (Gradescope's format), DIR/staff/<id>.txt (the staff view:
each failed check's case and traceback, autograder/grader/staff.py; in a folder of its own, so that a submission's
folder can be handed out), DIR/grades.csv (one row per
submission, one column per part), DIR/histograms.png (the score distribution of every part) and
DIR/summary.html (distributions, the checks failed most often, every submission; autograder/grader/report/summary.py).
With --reports, also DIR/<id>/report.html, the feedback report of each submission (autograder/grader/report/html.py).
A run that stops part-way resumes where it stopped: a submission with a results.json (and, with --reports, a
report.html) is not graded again unless --force. One broken submission never stops the batch: it gets a row
saying why. --part P regrades only part P of the submissions graded before and merges the new results into
their results.json (a submission not graded before is graded in full).

How a submission travels (docs/batch.md): this process (the coordinator) reads each submission's module files
into a `Job`, plain data; `grade_job(job)`, one call per submission, grades it on a worker (inline with --jobs 1,
in a local process pool with --jobs N, on any machine of a dask.distributed cluster with --scheduler) and returns
the documents to write; only the coordinator writes into DIR. A worker needs the kit and the hidden seed
installed, never the submissions folder or DIR.

The Job and where jobs run: autograder.grader.batch_jobs; grade_job: autograder.grader.batch_worker; what is read
and written in DIR per submission: autograder.grader.batch_results.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import as_completed
from pathlib import Path

from tqdm import tqdm

from autograder.grader.batch_jobs import _prepare, executor, kit_fingerprint
from autograder.grader.batch_results import _done, _graded_tests, _store, _unreadable, write_histograms
from autograder.grader.batch_worker import default_watchdog, grade_job
from autograder.grader.grades_table import GRADES_CSV, HISTOGRAMS, MAXIMA_CSV, owner_only, row_from_results, write_csv
from autograder.grader.intake import Submission, discover


def batch_outputs() -> tuple[str, ...]:
    """What a batch writes in its output folder beside the submissions' folders DIR/<id>/: its tables and summary,
    the staff views' folder, and what `--similarity` and `--gradebook` add."""
    from autograder.grader.gradebook import FORMATS, gradebook_file
    from autograder.grader.report.summary import SUMMARY
    from autograder.grader.similarity import REPORT, TABLE
    from autograder.grader.staff import STAFF_FOLDER

    return (
        GRADES_CSV,
        MAXIMA_CSV,
        HISTOGRAMS,
        SUMMARY,
        STAFF_FOLDER,
        REPORT,
        TABLE,
        *(gradebook_file(fmt) for fmt in FORMATS),
    )


def held_back(submissions: list[Submission]) -> dict[Submission, str]:
    """The submissions a batch cannot grade into a folder of their own, with why: an id that is the name of one of
    the batch's own outputs, or an id two submissions share (bob/ and bob.zip); names compared as a file system
    that ignores case would (a TA's laptop). Each costs only its own grade: its row says why, the rest is graded."""
    reserved = {name.casefold(): name for name in batch_outputs()}
    by_id: dict[str, list[Submission]] = {}
    for s in submissions:
        by_id.setdefault(s.id.casefold(), []).append(s)
    held = {}
    for s in submissions:
        same = by_id[s.id.casefold()]
        if s.id.casefold() in reserved:
            held[s] = (
                f"the id {s.id!r} is the name of the batch's own {reserved[s.id.casefold()]!r} in the output "
                "folder: rename this submission's folder or zip and run the batch again"
            )
        elif len(same) > 1:
            held[s] = (
                f"{len(same)} submissions share the id {s.id!r} ({', '.join(x.source.name for x in same)}): "
                "keep one, or give each its own name, and run the batch again"
            )
    return held


def run(
    submissions_root: Path,
    out: Path,
    jobs: int = 1,
    force: bool = False,
    reports: bool = False,
    parts: tuple[str, ...] | None = None,
    scheduler: str | None = None,
    watchdog: float | None = None,
    trained_figures: bool = True,
) -> list[dict]:
    """Grade every submission under `submissions_root` into `out`; return the grades.csv rows. reports: also write
    each submission's feedback report. parts: regrade only these parts of the submissions graded before (merged
    into their results.json). scheduler: the address of a dask.distributed scheduler to grade on. watchdog: the
    wall-clock seconds one submission's grade may take before it is ended (default: default_watchdog()).
    trained_figures=False: the reports leave out the figures of the trained models."""
    if watchdog is not None and not watchdog > 0:
        raise ValueError(f"watchdog: expected a positive number of seconds, got {watchdog!r}")
    watchdog = watchdog or default_watchdog()
    if parts and (force or reports):
        raise ValueError(
            "--part regrades parts of graded submissions and merges the results: it goes without "
            "--force (which regrades whole submissions) and --reports (a report draws every part from "
            "one run: use --reports --force)"
        )
    out.mkdir(parents=True, exist_ok=True)
    # The class's submissions and their results are the staff's alone: no worker may reach a classmate's.
    for folder in (Path(submissions_root), out):
        if folder.is_dir() and folder.stat().st_uid == os.geteuid():
            owner_only(folder)
    submissions = discover(submissions_root)
    from autograder.grader.staff import batch_staff_path

    held = held_back(submissions)
    # With `parts`: the parts to regrade and merge, per submission graded before (the others are graded in full).
    merge = {s.id: tuple(parts) for s in submissions if parts and s not in held and _graded_tests(out, s)}
    todo = [s for s in submissions if s not in held and (force or parts or not _done(out, s, reports))]
    if force:
        for s in todo:
            shutil.rmtree(out / s.id, ignore_errors=True)
            batch_staff_path(out, s.id).unlink(missing_ok=True)
    failures: dict[str, str] = {}

    def finish(s: Submission, outcome) -> None:
        """Store what grading `s` returned (outcome() gives it or raises); a failure goes in its row."""
        try:
            _store(out, s, outcome(), merge.get(s.id))
        except Exception as exc:  # noqa: BLE001 (never let one submission stop the batch)
            failures[s.id] = f"{type(exc).__name__}: {exc}"[:300]

    kit = kit_fingerprint()
    with (
        executor(jobs, scheduler) as pool,
        tqdm(total=len(submissions), initial=len(submissions) - len(todo), unit="submission") as bar,
    ):
        futures = {}
        for s in todo:
            job = _prepare(s, merge.get(s.id), reports, kit, watchdog, trained_figures)
            if isinstance(job, str):
                _unreadable(out, s, job)
                bar.update()
            elif pool is None:  # --jobs 1: a second bar (or a line per part) says where this submission is
                finish(s, lambda job=job, s=s: grade_job(job, progress=f"{s.id}: "))
                bar.update()
            else:
                futures[pool.submit(grade_job, job)] = s
        for future in as_completed(futures):
            finish(futures[future], future.result)
            bar.update()
    rows = []
    for s in submissions:
        results = out / s.id / "results.json"
        if s in held:
            rows.append({"id": s.id, "name": s.name, "status": f"not graded: {held[s]}"})
        elif results.exists() and s.id not in failures:
            rows.append(row_from_results(s, results))
        else:
            rows.append({"id": s.id, "name": s.name, "status": f"grader error: {failures.get(s.id, 'no results')}"})
    write_csv(rows, out / GRADES_CSV)
    write_histograms(rows, out / HISTOGRAMS)
    from autograder.grader.report import write_summary

    write_summary(rows, out)
    for path in out.iterdir():
        if path.is_file():
            owner_only(path)
    return rows
