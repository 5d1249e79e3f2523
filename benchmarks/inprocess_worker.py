"""For benchmarks only: the worker's interface with student code imported into the grading process.

This is what the sandbox exists to avoid (student code could read expected values, patch the checks or
write results); benchmarks/sandbox_overhead.py uses it to measure what the sandbox costs. It is not part of
the kit's package: nothing the kit ships can grade without the sandbox.

    python benchmarks/inprocess_worker.py SUBMISSION [--part PART ...]   # grade in-process, print the table
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.public.client import StudentError
from autograder.public.staging import stage
from autograder.worker import recipes
from autograder.worker.forbidden import forbid
from autograder.worker.main import sanitize


class InProcessWorker:
    """autograder.public.client.StudentWorker with the student's module imported here: no process, no limits."""

    def __init__(self, module: str, submission: Path, scratch: Path, *args, **kwargs):
        self.module, self.dead_reason, self.import_error = module, None, None
        staging = stage(module, Path(submission), Path(scratch) / "staging")
        spec = importlib.util.spec_from_file_location(f"_inprocess_{module}", staging / f"{module}.py")
        self.student = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = self.student  # as an import does: dataclasses look their module up there
        try:
            spec.loader.exec_module(self.student)
        except Exception as exc:  # noqa: BLE001 (the student's import error, as a worker reports it)
            self.import_error = StudentError(type(exc).__name__, str(exc))
        self.registry = recipes.load(module)

    alive = True
    deadline = None  # no time limits: nothing can stop code running in this process

    def call(self, recipe: str, timeout: float | None = None, deadline=None, evaluate=None, **kwargs):
        import torch

        fn = self.registry[recipe]
        torch.manual_seed(0)
        recipes._report_progress = lambda epoch, epochs, loss, tokens=None: (
            evaluate is not None and tokens is not None and evaluate(epoch, epochs, sanitize(tokens)) is True
        )
        try:
            with forbid(*fn.forbid):
                return sanitize(fn(self.student, **kwargs))
        except Exception as exc:  # noqa: BLE001 (the student's error, as a worker reports it)
            raise StudentError(type(exc).__name__, str(exc)) from None
        finally:
            recipes._report_progress = None

    def restart(self) -> None:
        pass

    def pause(self) -> None:
        pass

    def serve_hidden(self) -> None:
        pass  # the references are this process's own `solutions` package, for every check

    def close(self) -> None:
        sys.modules.pop(f"_inprocess_{self.module}", None)


def in_process_workers(
    part: str, submission: Path, scratch: Path, references: dict[str, str], deadline
) -> InProcessWorker:
    """A worker factory (autograder.public.client.WorkerFactory) for engine.grade: every part in this process.
    The references of earlier parts are this process's own `solutions` package."""
    for name in references:
        recipes.REFERENCES[name] = importlib.import_module(f"solutions.{name}")
    return InProcessWorker(part, submission, scratch)


def main() -> int:
    from autograder.grader.engine import GradeOptions, grade
    from autograder.public.score_table import table
    from shared.parts import MODULES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submission", type=Path)
    parser.add_argument("--part", action="append", choices=MODULES, help="grade only this part (repeatable)")
    args = parser.parse_args()
    report = grade(
        args.submission, GradeOptions(parts=tuple(args.part) if args.part else None), worker_factory=in_process_workers
    )
    print(table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
