"""Feedback reports: one self-contained HTML page per graded submission (`html.py`, with figures of the
student's own trained models from `figures.py`), the batch summary for TAs (`summary.py`), and the reference's
training curves they are drawn beside (`reference.py`). Grading never needs this package: checks keep plain
data with `ctx.keep`, and the report is drawn afterwards from `GradeReport.artifacts`."""

from __future__ import annotations


def write_report(report, path, submission: str = "", trained_figures: bool = True):
    """Write the feedback report of a GradeReport to `path` (see autograder/grader/report/html.py)."""
    from autograder.grader.report.html import write_report as write

    return write(report, path, submission, trained_figures)


def write_summary(rows, out):
    """Write out/summary.html for a batch (see autograder/grader/report/summary.py)."""
    from autograder.grader.report.summary import write_summary as write

    return write(rows, out)
