"""The kit's public checks as otter-grader test cases, for `grader.check("<part>")` in the part notebooks.

Every test file `assignments/tests/<part>.py` is generated (`python -m instructor notebooks`) from
autograder/grader/rubric.json: one otter test case per public check of the part, worth the check's points. A test
case asks `PublicChecks.verify(check name, module)`; the first one to ask runs the part's public checks on the
module's folder with the public checker (autograder/public/checker.py: student code runs in a separate worker
process, on the checks' own cases, as `python -m autograder check` runs them), and the others read the same
results. It needs nothing of the grader, so a student's handout runs it as the kit does. otter runs a test file
afresh on every `grader.check` call, so each call checks the module once, as it is on disk at that moment.

A failed check raises PublicCheckFailed with the grader's message for that check, which otter shows
under the test case.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from types import ModuleType

from shared.parts import BY_MODULE, MODULES


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

    def _folder_of(self, module) -> Path:
        """The folder of the notebook's imported part module, else the working directory (the notebook's)."""
        path = getattr(module, "__file__", None) if isinstance(module, ModuleType) else None
        if path and Path(path).name == f"{self.part}.py":
            return Path(path).resolve().parent
        return Path.cwd()

    def results(self, module=None) -> dict:
        """{check name: autograder.public.runner.CheckResult} of the part's public checks, run on first use."""
        if self._results is None:
            from autograder.public import checker

            self.folder = self._folder_of(module)
            with contextlib.redirect_stderr(sys.stdout):  # library warnings are not the student's errors
                report = checker.check(self.folder, parts=(self.part,))   # keeps the notebook's thread count
            self._results = {r.name: r for r in report.results}
        return self._results

    def verify(self, check: str, module=None) -> None:
        """Raise PublicCheckFailed unless the public check `check` passed on `module`'s folder."""
        result = self.results(module).get(check)
        if result is None:
            raise PublicCheckFailed(f"the grader has no public check {check!r} for {self.part}.py; "
                                    "the notebook's tests are older than the kit: tell the course staff")
        if not result.passed:
            raise PublicCheckFailed(result.output.strip())
