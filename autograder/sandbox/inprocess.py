"""For benchmarks only: the worker's interface with student code imported into the grading process.

This is what the sandbox exists to avoid (student code could read expected values, patch the checks or
write results); benchmarks/sandbox_overhead.py uses it to measure what the sandbox costs.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from autograder import recipes
from autograder.sandbox.client import StudentError
from autograder.sandbox.forbidden import forbid
from autograder.sandbox.staging import stage
from autograder.sandbox.worker import sanitize


class InProcessWorker:
    def __init__(self, module: str, submission: Path, scratch: Path, *args, **kwargs):
        self.module, self.dead_reason, self.import_error = module, None, None
        staging = stage(module, Path(submission), Path(scratch) / "staging")
        spec = importlib.util.spec_from_file_location(f"_inprocess_{module}", staging / f"{module}.py")
        self.student = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = self.student  # as an import does: dataclasses look their module up there
        try:
            spec.loader.exec_module(self.student)
        except Exception as exc:
            self.import_error = StudentError(type(exc).__name__, str(exc))
        self.registry = recipes.load(module)

    alive = True
    deadline = check_deadline = None   # no time limits: nothing can stop code running in this process

    def call(self, recipe: str, timeout: float = 20.0, **kwargs):
        import torch

        fn = self.registry[recipe]
        torch.manual_seed(0)
        try:
            with forbid(*fn.forbid):
                return sanitize(fn(self.student, **kwargs))
        except Exception as exc:
            raise StudentError(type(exc).__name__, str(exc)) from None

    def restart(self) -> None:
        pass

    def close(self) -> None:
        sys.modules.pop(f"_inprocess_{self.module}", None)
