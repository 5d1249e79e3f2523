"""The suite grades many submissions at once on few cores (pytest-xdist): wall-clock limits are scaled so
that load never cuts off correct code. Grading machines run with the factor 1."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("CAPTIONKIT_TIME_SCALE", "4")


@pytest.fixture(scope="session")
def reference_report():
    """The full grade of the reference solutions (about 80 CPU seconds), once per test process: tests using it
    carry pytest.mark.xdist_group("full-grade") so that they share one (tests/grader/test_grader.py, test_report.py)."""
    from autograder.grader.engine import grade

    return grade(Path(__file__).resolve().parents[1] / "solutions")


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject.toml): one worker more than the machine has cores. Many tests spend long stretches
    waiting (on a submission's time limit, a hostile module's sleep, pip, a notebook's kernel), and a third worker on
    two cores fills them: with the data cache already built, the whole suite took 1329 s with two workers and 1083 s
    with three on the same 2-core machine (December 2026); a clean clone, which builds its caches first, gains less.
    Wall-clock limits are scaled above, so the extra load costs no correct code a point."""
    return (os.cpu_count() or 1) + 1


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Fail a test of an xdist_group before its fixtures are built when pytest-xdist's --dist loadgroup lost its group.

    loadgroup appends "@<group>" to the node id of each test marked xdist_group and sends a group's tests to one
    worker. A pytest that ignores the new node id (9.2 keeps node ids elsewhere) spreads every group over the
    workers: each one builds the group's session fixtures again (full grades, the Gradescope install, the nbgrader
    course) and the two A18 tests see each other's leftovers. pyproject.toml pins a pytest that works."""
    config = item.config
    if (
        hasattr(config, "workerinput")
        and config.getoption("loadgroup", default=False)
        and item.get_closest_marker("xdist_group")
        and "@" not in item.nodeid
    ):
        pytest.fail(
            "--dist loadgroup lost this test's xdist_group (its node id has no @group): this pytest and "
            "pytest-xdist do not work together; see the pins in pyproject.toml",
            pytrace=False,
        )


# The student handout, built once per session, and an interpreter that cannot import the kit (tests/handout_env.py).
from tests.handout_env import built, handout_verdicts_of, student_python  # noqa: E402, F401

# What each module of the suite needs, as markers (pyproject.toml declares them; --strict-markers refuses others):
#   slow     minutes of CPU: full grades, many submissions, installs, notebooks (`-m "not slow"`: the quick loop)
#   sandbox  runs student code in the grader's workers (the sandbox of docs/security.md)
#   notebook runs notebooks (nbconvert, nbgrader)
#   handout  builds the student handout and runs it without the kit
# `caps` is set per test (tests/hostile): its outcome depends on the grader's capabilities.
MODULE_MARKS = {
    "test_answer_free.py": ("slow", "handout", "sandbox"),
    "test_batch.py": ("slow", "sandbox"),
    "test_calibrate.py": ("slow",),
    "test_check_train.py": ("slow", "sandbox"),
    "test_cluster.py": ("slow", "sandbox"),
    "test_grader.py": ("slow", "sandbox"),
    "test_grader_variants.py": ("slow", "sandbox"),
    "test_gradescope.py": ("slow", "sandbox"),
    "test_handout.py": ("slow", "handout", "sandbox"),
    "test_handout_student.py": ("slow", "handout", "sandbox"),
    "test_nbgrader_course.py": ("slow", "notebook", "sandbox"),
    "test_notebooks.py": ("slow", "notebook", "sandbox"),
    "test_public_checks.py": ("sandbox",),
    "test_public_messages.py": ("sandbox",),
    "test_worker_imports.py": ("sandbox",),
}
FOLDER_MARKS = {"hostile": ("slow", "sandbox")}


# A test that needs a full grade of the reference (about 80 CPU seconds, once per test process) is slow wherever it is.
SLOW_FIXTURES = ("reference_report",)


def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath))
        marks = MODULE_MARKS.get(path.name, ()) + FOLDER_MARKS.get(path.parent.name, ())
        if any(name in getattr(item, "fixturenames", ()) for name in SLOW_FIXTURES):
            marks += ("slow", "sandbox")
        for mark in dict.fromkeys(marks):
            item.add_marker(mark)
