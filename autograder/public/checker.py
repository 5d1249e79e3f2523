"""The public checker: every public check of a working copy, run on the check's own cases, without the grader.

    python -m autograder.public check [FOLDER] [--part MODULE ...]     (FOLDER: default ./)
    python -m autograder.public check [FOLDER] --train [--part MODULE ...]

Exit status: 0 when every check passed, 1 when one failed, 2 for a usage error.

--train: instead, train each trained part as its training check does, on the public data (train): the recipe and
the budget the grader uses (autograder/public/training.py, published_training.py), with the student's own modules
of the other parts the run uses where the grader uses its reference versions, and a fixed time limit
(LIMITS.training) where the grader times the reference. It prints the lines the kit's `python -m autograder check
--train` prints.

What a student holds (a handout built from the public zone, autograder/public/, with the worker zone and shared/)
is enough to run it: the public checks (autograder/public/checks/<part>: a module or a package), their points and
numbers in autograder/public/rubric.json (generated from the grader's rubric by `python -m instructor notebooks`),
and the golden data they read. Student code runs in a separate worker process with the grader's limits and deadlines
(autograder/public/client/); nothing here holds a reference solution, a hidden check or hidden data. It prints
the lines the kit's `python -m autograder check` prints: both score with autograder/public/runner.py
(and print with autograder/public/score_table.py).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from autograder.public import client
from autograder.public.checks import Check, registered
from autograder.public.grade_report import Entry, GradeReport
from autograder.public.limits import LIMITS, part_deadline
from autograder.public.progress import Progress, for_terminal
from autograder.public.staging import StagingError
from shared.parts import BY_MODULE, MODULES

RUBRIC = Path(__file__).resolve().parent / "rubric.json"


class RubricError(Exception):
    """The public rubric is missing or malformed; the message is one line."""


def _rubric_document(path: Path = RUBRIC) -> dict:
    """The public rubric's "parts"; RubricError when unreadable."""
    try:
        return dict(json.loads(Path(path).read_text())["parts"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RubricError(
            f"{path.name}: cannot read the public rubric ({type(exc).__name__}); regenerate it with "
            "`python -m instructor notebooks`"
        ) from None


def load_rubric(path: Path = RUBRIC) -> dict[str, dict[str, Entry]]:
    """{part: {check name: Entry}} of the public checks, in each part's order; RubricError when unreadable."""
    try:
        return {
            part: {name: Entry(float(e["points"]), "public", int(e["number"])) for name, e in spec["checks"].items()}
            for part, spec in _rubric_document(path).items()
        }
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RubricError(
            f"{path.name}: cannot read the public rubric ({type(exc).__name__}); regenerate it with "
            "`python -m instructor notebooks`"
        ) from None


def full_points(path: Path = RUBRIC) -> dict[str, float]:
    """{part: its points in the full grade (public, hidden and training checks)}; RubricError when unreadable."""
    try:
        return {part: float(spec["points"]) for part, spec in _rubric_document(path).items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise RubricError(
            f"{path.name}: cannot read the public rubric ({type(exc).__name__}); regenerate it with "
            "`python -m instructor notebooks`"
        ) from None


def public_checks_of(part: str) -> list[Check]:
    """The public checks of `part` (autograder/public/checks/<part>, a module or a package), in definition order."""
    importlib.import_module(f"autograder.public.checks.{part}")
    return registered(part)


def check(
    folder: Path,
    parts: tuple[str, ...] | None = None,
    rubric: dict[str, dict[str, Entry]] | None = None,
    scratch: Path | None = None,
    progress: Progress | None = None,
) -> GradeReport:
    """Run the public checks of every part (or `parts`) on `folder`/<part>.py; never raises for a bad module.
    `progress` is told where the run is (autograder.public.progress; by default nothing is shown).

    Every part's workers are forked from one zygote (client.SharedZygote), started before anything here imports
    torch: on the student's own machine no sandbox stands between the parts, and one import of torch serves them
    all. Each part still has workers of its own: a crash or a time-out costs that part only."""
    chosen = [p for p in MODULES if parts is None or p in parts]
    with _workspace("captionkit-check-", scratch, tuple(chosen)) as (_, runtime, zygote):
        return _check_parts(Path(folder), chosen, rubric, runtime, zygote, progress or Progress())


@contextlib.contextmanager
def _workspace(prefix: str, scratch: Path | None, parts: tuple[str, ...]):
    """(folder, the worker's runtime copy in it, the zygote every part's workers are forked from) for a run of
    `parts`: the zygote started at once, ended and the folder removed when the run ends."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=scratch) as tmp:
        folder = Path(tmp)
        os.chmod(folder, 0o711)
        runtime = client.copy_runtime(folder / "runtime")
        zygote = client.SharedZygote.start(folder / "parts", parts, runtime)
        try:
            yield folder, runtime, zygote
        finally:
            zygote.close()


def _check_parts(
    folder: Path,
    chosen: list[str],
    rubric: dict[str, dict[str, Entry]] | None,
    runtime: Path,
    zygote: client.SharedZygote,
    progress: Progress,
) -> GradeReport:
    import torch

    # The runner imports torch: `check` starts the workers' zygote first, so the two imports overlap.
    from autograder.public.runner import run_part_checks

    rubric = load_rubric() if rubric is None else rubric
    checks_of = {
        part: sorted(
            (c for c in public_checks_of(part) if c.name in rubric.get(part, {})),
            key=lambda c: rubric[part][c.name].number,
        )
        for part in chosen
    }
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    report, started = GradeReport(), time.monotonic()
    report.notes.append(client.SEPARATE_PROCESS.note)
    progress.begin(sum(len(checks) for checks in checks_of.values()))
    try:
        for i, part in enumerate(chosen):
            progress.part(i + 1, len(chosen), part, len(checks_of[part]))
            deadline = part_deadline()

            def start(part=part, deadline=deadline):
                return client.Worker(
                    part,
                    folder,
                    zygote.folder / part,
                    runtime,
                    client.SEPARATE_PROCESS,
                    deadline=deadline,
                    shared=zygote,
                )

            results = run_part_checks(
                part, BY_MODULE[part].number, checks_of[part], rubric.get(part, {}), start, None, progress=progress
            )
            report.results.extend(results)
            progress.part_done(sum(r.score for r in results), sum(r.max_score for r in results))
    finally:
        progress.end()
        torch.set_num_threads(threads)
    report.seconds = time.monotonic() - started
    report.full_points = {part: points for part, points in full_points().items() if part in chosen}
    return report


def trained_parts(folder: Path, parts: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The trained parts (or those of `parts`) whose module is in `folder`, in order."""
    from autograder.public.published_training import PUBLISHED

    return tuple(p for p in PUBLISHED if (parts is None or p in parts) and (Path(folder) / f"{p}.py").is_file())


def train(folder: Path, parts: tuple[str, ...], scratch: Path | None = None, progress: Progress | None = None):
    """Train each of `parts` (trained parts whose modules are in `folder`) on the public data as its training check
    does (autograder.public.training.train_parts), its worker holding the student's own modules of the other parts its
    run uses, each run within LIMITS.training; the runs, judged."""
    from shared.encoder import user_cache

    os.environ.setdefault("CAPTIONKIT_CACHE", str(user_cache()))  # the public data's cache, not the student's folder
    with _workspace("captionkit-train-", scratch, tuple(parts)) as (tmp, runtime, zygote):
        return _train_parts(Path(folder), parts, tmp, runtime, zygote, progress)


def _train_parts(
    folder: Path,
    parts: tuple[str, ...],
    tmp: Path,
    runtime: Path,
    zygote: client.SharedZygote,
    progress: Progress | None,
):
    from autograder.public import training

    def start(part: str) -> client.Worker:
        missing = [other for other in training.OTHER_PARTS[part] if not (folder / f"{other}.py").is_file()]
        if missing:
            raise StagingError(
                f"{missing[0]}.py is missing from the folder: the run of {part} uses your "
                f"{missing[0]}.py (the grader uses its reference version)"
            )
        own = {
            other: (folder / f"{other}.py").read_bytes().decode("utf-8", errors="replace")
            for other in training.OTHER_PARTS[part]
        }
        return client.Worker(
            part, folder, zygote.folder / part, runtime, client.SEPARATE_PROCESS, references=own, shared=zygote
        )

    def within(part: str, worker, run):
        return run(LIMITS.training)

    return training.train_parts(parts, start, within, training.public_inputs(tmp / "public"), progress)


def training_notes() -> str:
    """What a student should know of the runs beside their lines: how they end, and the grader's time budget."""
    return (
        f"Each run trains with the grader's recipe (epochs, batch size, learning rate) on the public scenes and, "
        f"as the grader's does, stops after the first epoch whose captions reach the threshold. When graded, your "
        f"model is trained and judged on scenes you do not have: its score and the epoch it stops at can differ "
        f"from these. Time: a run here may take {LIMITS.seconds(LIMITS.training):.0f} s; the grader stops a run at "
        f"{LIMITS.budget_factor:g} x the reference's training time on the grading machine plus "
        f"{LIMITS.budget_allowance:g} s, so a run much slower than the reference can pass here and fail there."
    )


def exit_now(code: int) -> None:
    """End the process with `code` once its output is written, without the interpreter's teardown: after torch is
    imported that teardown takes a third of a second, a tenth of a one-part `check`. For the command lines of `check`
    only, which by then have closed their files and removed their folders. The atexit functions run as at any exit
    (the kit's remove hypothesis's cache folder and end the template `check --train` starts; all of them together
    cost no measurable time): skipped, they left both folders in the temporary folder at every run."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.public", description="Run the public checks.")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="run the public checks on a working copy")
    c.add_argument("folder", type=Path, nargs="?", default=Path("."))
    c.add_argument("--part", action="append", choices=MODULES, help="check only this part (repeatable)")
    c.add_argument(
        "--train",
        action="store_true",
        help="instead, train each trained part on the public data as its "
        "training check does (same recipe and budget, your own modules of the other parts it uses) and "
        "print its score, the threshold and the image controls",
    )
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder}: not a folder")
    if args.train:
        from autograder.public.published_training import PUBLISHED
        from autograder.public.training_report import table as training_table

        parts = trained_parts(args.folder, tuple(args.part) if args.part else None)
        if not parts:
            modules = ", ".join(f"{p}.py" for p in PUBLISHED)
            parser.error(
                f"{args.folder}: none of the trained parts' modules ({modules})"
                + (f" among --part {' '.join(args.part)}" if args.part else "")
            )
        runs = train(args.folder, parts, progress=for_terminal())
        print(training_table(runs, own_parts=True))
        print(training_notes())
        return 0 if all(run.passed for run in runs) else 1
    try:
        report = check(args.folder, tuple(args.part) if args.part else None, progress=for_terminal())
    except RubricError as exc:
        parser.error(str(exc))
    from autograder.public.score_table import table

    print(table(report))
    return 0 if all(r.passed for r in report.results) else 1


if __name__ == "__main__":
    sys.exit(main())
