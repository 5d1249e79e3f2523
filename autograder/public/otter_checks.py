"""The kit's public checks as otter-grader test cases, for `grader.check("<part>")` in the part notebooks.

Every test file `assignments/tests/<part>.py` is generated (`python -m instructor notebooks`) from
autograder/public/rubric.json: one otter test case per public check of the part, worth the check's points. A test
case asks `PublicChecks.verify(check name, module)`; the first one to ask runs the part's public checks on the
module's folder with the public checker (autograder/public/checker.py: student code runs in a separate worker
process, on the checks' own cases, as `python -m autograder check` runs them), and the others read the same
results. It needs nothing of the grader, so a student's handout runs it as the kit does. otter runs a test file
afresh on every `grader.check` call, so each call checks the module once, as it is on disk at that moment.

A failed check raises PublicCheckFailed with the grader's message for that check. What the notebook shows is the
kit's own lines (summary: PASS/FAIL with points, each failure's message once, one line per unwritten TODO, and
what the public checks cover), registered with IPython's display formatters for otter's TestFile (show_compactly):
otter's own per-case wrapper lines ("Error at line 23 in test bleu: ...", lines of this generated file) are left
out, and otter itself is unchanged.
"""

from __future__ import annotations

import contextlib
import html
import sys
from pathlib import Path
from types import ModuleType

from shared.parts import BY_MODULE, MODULES

# The report of each part's latest grader.check in this kernel (part -> autograder.public.grade_report.GradeReport).
_LATEST: dict = {}


def summary(test_file) -> str:
    """What `grader.check("<part>")` shows: otter's verdict line, then the kit's table of the part
    (autograder.public.score_table.table); otter's own summary for a test file that is not one of the kit's."""
    from autograder.public.score_table import table

    report = _LATEST.get(test_file.name)
    if report is None:
        return test_file.summary()
    verdict = (
        "All test cases passed!"
        if test_file.passed_all
        else f"{test_file.score:g} of {test_file.possible:g} points from the public checks"
    )
    return f"{test_file.name} results: {verdict}\n{table(report)}"


def show_compactly() -> None:
    """In an IPython kernel, show otter's TestFile (what grader.check returns) as summary() does, through IPython's
    display formatters; elsewhere, nothing."""
    try:
        from IPython import get_ipython
        from otter.test_files.abstract_test import TestFile
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatters = shell.display_formatter.formatters
    formatters["text/plain"].for_type(TestFile, lambda test_file, printer, cycle: printer.text(summary(test_file)))
    formatters["text/html"].for_type(TestFile, lambda test_file: f"<pre>{html.escape(summary(test_file))}</pre>")


class PublicCheckFailed(AssertionError):
    """A public check failed; the message is the grader's, as `python -m autograder check` prints it."""


class PublicChecks:
    """The public checks of one part, graded at most once per instance (one instance per grader.check)."""

    def __init__(self, part: str):
        if part not in BY_MODULE:
            raise ValueError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
        self.part = part
        self.folder: Path | None = None
        self._results = None
        show_compactly()

    def _folder_of(self, module) -> Path:
        """The folder of the notebook's imported part module, else the working directory (the notebook's)."""
        path = getattr(module, "__file__", None) if isinstance(module, ModuleType) else None
        if path and Path(path).name == f"{self.part}.py":
            return Path(path).resolve().parent
        return Path.cwd()

    def results(self, module=None) -> dict:
        """{check name: autograder.public.grade_report.CheckResult} of the part's public checks, run on first use."""
        if self._results is None:
            from autograder.public import checker

            self.folder = self._folder_of(module)
            with contextlib.redirect_stderr(sys.stdout):  # library warnings are not the student's errors
                report = checker.check(self.folder, parts=(self.part,))  # keeps the notebook's thread count
            _LATEST[self.part] = report
            self._results = {r.name: r for r in report.results}
        return self._results

    def verify(self, check: str, module=None) -> None:
        """Raise PublicCheckFailed unless the public check `check` passed on `module`'s folder."""
        result = self.results(module).get(check)
        if result is None:
            raise PublicCheckFailed(
                f"the grader has no public check {check!r} for {self.part}.py; "
                "the notebook's tests are older than the kit: tell the course staff"
            )
        if not result.passed:
            raise PublicCheckFailed(result.output.strip())
