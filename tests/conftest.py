"""The suite grades many submissions at once on few cores (pytest-xdist): wall-clock limits are scaled so
that load never cuts off correct code. Grading machines run with the factor 1."""
import os
from pathlib import Path

import pytest

os.environ.setdefault("CAPTIONKIT_TIME_SCALE", "4")


@pytest.fixture(scope="session")
def reference_report():
    """The full grade of the reference solutions (about 80 CPU seconds), once per test process: tests using it
    carry pytest.mark.xdist_group("full-grade") so that they share one (tests/test_grader.py, test_report.py)."""
    from autograder.grader.engine import grade
    return grade(Path(__file__).resolve().parents[1] / "solutions")
