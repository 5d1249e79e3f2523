"""Command line of the grader: one handler per command.

python -m autograder grade SUBMISSION_DIR [--json PATH] [--report PATH.html] [--staff [PATH]] [--public-only]
                           [--part MODULE ...]
python -m autograder check [DIR] [--part MODULE ...] [--train]
                                     # the public checks on your working copy (default: assignments/);
                                     # --train: the training checks' runs on the public data instead;
                                     # exit status 1 when a check fails
python -m autograder demo [--json PATH] [--report PATH.html]   # grade the bundled, partly correct sample
python -m autograder batch SUBMISSIONS --out DIR [--jobs N | --scheduler ADDRESS] [--part MODULE ...] [--force]
                           [--reports] [--gradebook canvas|long] [--similarity]
                                     # a whole class, for TAs (docs/batch.md, docs/ta.md)
python -m autograder gradebook DIR --format canvas|long --out FILE [--submissions SUBMISSIONS]
                                     # a batch's grades as Canvas's gradebook import or one row per check
python -m autograder similarity SUBMISSIONS --out DIR [--threshold 0.5]
                                     # which submissions share code, per part (staff only)
python -m autograder reference-curves   # re-measure the reference's training curves the reports draw
python -m autograder gradescope-zip --out autograder.zip [--seed N | --new-seed]
python -m autograder gradescope-run [--root /autograder]   # inside Gradescope's container
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from autograder.grader.gradebook import DEFAULT_ASSIGNMENT, FORMATS, gradebook_file
from shared.parts import MODULES


class UsageError(Exception):
    """A command was given arguments it cannot use; the message names the argument and what was expected."""


def grade(args) -> int:
    """Grade a submission folder: the table, and results.json and the feedback report where asked."""
    _existing_folder(args.submission)
    parts = tuple(args.part) if args.part else None
    from autograder.grader.engine import GradeOptions

    report = _graded(
        args.submission, GradeOptions(parts=parts, public_only=args.public_only), json_output=args.json is not None
    )
    name = args.submission.resolve().name
    _show(report, args.json, args.report, name, trained_figures=not args.no_trained_figures)
    if args.staff:
        from autograder.grader.staff import (
            STAFF_FILE,
            staff_text,
            with_written_answers,
            write_staff,
            written_answers_text,
        )

        path = args.staff if args.staff is not True else (args.json.parent if args.json else Path(".")) / STAFF_FILE
        text = with_written_answers(staff_text(report, name), written_answers_text(args.submission))
        print(f"wrote {write_staff(text, path)} (for the course staff only)")
    return 0


def check(args) -> int:
    """The public checks on a working copy of the assignment, on their own cases only, as the handout's checker runs
    them (autograder.public.checker: every part's workers forked from one zygote, no sandbox against the student's
    own code; a grade runs the same checks sandboxed, with the grader's round of cases drawn from the hidden seed).
    --train: the training checks instead, on the public data."""
    _existing_folder(args.folder)
    if args.train:
        return check_training(args.folder, tuple(args.part) if args.part else None)
    from autograder.public.checker import check as public_checks
    from autograder.public.progress import for_terminal

    report = public_checks(args.folder, tuple(args.part) if args.part else None, progress=for_terminal())
    _show(report)
    return 0 if all(r.passed for r in report.results) else 1


def check_training(folder: Path, parts: tuple[str, ...] | None) -> int:
    """Train each trained part of `folder` (or of `parts`) on the public data as its training check does, with the
    same recipes, the reference versions of the other parts it uses and the grader's time budget (the reference
    timed on the public data, PublicContext), through the handout's own path (autograder.public.training); print its
    score next to the published threshold and the lab's image controls. Exit status 1 when a run does not reach its
    threshold."""
    import os

    import torch

    from autograder.grader.context import PublicContext
    from autograder.grader.engine import REFERENCES, SOLUTIONS, sandboxed_workers
    from autograder.grader.isolation import detect
    from autograder.grader.training import SPECS, run_within_budget
    from autograder.public import training, training_report
    from autograder.public.client import copy_runtime
    from autograder.public.limits import part_deadline
    from autograder.public.progress import for_terminal

    trained = tuple(p for p in SPECS if (parts is None or p in parts) and (folder / f"{p}.py").is_file())
    if not trained:
        raise UsageError(
            f"{folder}: none of the trained parts' modules ({', '.join(f'{p}.py' for p in SPECS)})"
            + (f" among --part {' '.join(parts)}" if parts else "")
        )
    torch.set_num_threads(1)  # as a grade: the encoder's cache and the reference's timed epoch are one thread's
    with tempfile.TemporaryDirectory(prefix="captionkit-train-") as tmp:
        os.chmod(tmp, 0o711)  # the sandbox user reaches the shared inputs below it, and lists nothing
        ctx = PublicContext(Path(tmp) / "grader", shared=Path(tmp) / "shared")
        ctx.time_optimizer_import()  # before any worker exists, as a grade does (every budget counts it)
        workers = sandboxed_workers(copy_runtime(Path(tmp) / "runtime"), detect())

        def start(part: str):
            references = {name: (SOLUTIONS / f"{name}.py").read_text() for name in REFERENCES[part]}
            return workers(part, folder, Path(tmp) / part, references, part_deadline())

        runs = training.train_parts(
            trained,
            start,
            lambda part, worker, train: run_within_budget(SPECS[part], worker, ctx, train),
            training.public_inputs(Path(tmp) / "public", ctx.data),
            for_terminal(),
        )
    print(training_report.table(runs))
    return 0 if all(run.passed for run in runs) else 1


def demo(args) -> int:
    """Grade the bundled, partly correct sample submission."""
    from autograder.grader import sample
    from autograder.grader.engine import GradeOptions

    with tempfile.TemporaryDirectory(prefix="captionkit-sample-") as tmp:
        folder = sample.build(Path(tmp) / "submission")
        print(sample.__doc__)
        report = _graded(folder, GradeOptions(), json_output=args.json is not None)
    _show(report, args.json, args.report, "the sample submission")
    return 0


def batch(args) -> int:
    """Grade every submission of a folder into an output folder (results, grades.csv, histograms, summary)."""
    from autograder.grader import batch as batch_grading
    from autograder.grader.intake import IntakeError

    if args.jobs < 1:
        raise UsageError(f"--jobs: expected a whole number >= 1, got {args.jobs}")
    if args.similarity:  # first, so that the summary the batch writes links the report
        similarity(args)
    try:
        rows = batch_grading.run(
            args.submissions,
            args.out,
            jobs=args.jobs,
            force=args.force,
            reports=args.reports,
            parts=tuple(args.part) if args.part else None,
            scheduler=args.scheduler,
            watchdog=args.watchdog,
            trained_figures=not args.no_trained_figures,
        )
    except (IntakeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    from autograder.grader.results import was_graded

    print(
        f"graded {sum(was_graded(r) for r in rows)} of {len(rows)} submissions; "
        f"wrote {args.out / 'grades.csv'} (maxima: grades-maxima.csv), {args.out / 'histograms.png'} and "
        f"{args.out / 'summary.html'} (staff only: it links each submission's staff view)"
        + (f" and a report.html per submission in {args.out}" if args.reports else "")
    )
    from autograder.grader.staff import add_written_answers

    if add_written_answers(args.submissions, args.out):  # the written questions' answers beside their rubrics
        print(f"staff views with written answers beside their rubrics: {args.out / 'staff'}")
    if args.gradebook:
        path = _write_gradebook(args.out, args.gradebook, args.out / gradebook_file(args.gradebook), args.submissions)
        print(f"wrote {path} (staff only: names and grades)")
    return 0


def similarity(args) -> int:
    """Per part, the pairwise similarity of the submitted modules (the stubs' code removed): DIR/similarity.html
    and DIR/similarity.csv, staff only; a summary.html already in DIR is written again to link them."""
    from autograder.grader import similarity as similar
    from autograder.grader.intake import IntakeError

    threshold = getattr(args, "threshold", similar.THRESHOLD)
    try:
        pairs = similar.write(args.submissions, args.out, threshold)
        similar.link_from_summary(args.submissions, args.out)
    except (IntakeError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    flagged = sum(p.score >= threshold for p in pairs)
    print(
        f"compared {len(pairs)} pairs of modules, {flagged} at or above {threshold:.0%}; wrote "
        f"{args.out / similar.REPORT} and {args.out / similar.TABLE} (staff only: they name students)"
    )
    return 0


def gradebook(args) -> int:
    """A batch's grades in a gradebook's format: Canvas's import, or one row per student and check."""
    path = _write_gradebook(args.dir, args.format, args.out, args.submissions, args.assignment, args.assignment_id)
    print(f"wrote {path} (staff only: names and grades)")
    return 0


def _write_gradebook(out: Path, fmt: str, path: Path, submissions: Path | None, *names) -> Path:
    from autograder.grader.gradebook import GradebookError, write

    try:
        return write(out, fmt, path, submissions, *names)
    except GradebookError as exc:
        raise UsageError(str(exc)) from None


def gradescope_zip(args) -> int:
    """Build the Gradescope autograder zip."""
    from autograder.grader import gradescope

    path = gradescope.build_zip(args.out, gradescope.new_seed() if args.new_seed else args.seed)
    print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
    return 0


def gradescope_run(args) -> int:
    """Inside Gradescope's container: grade ROOT/submission into ROOT/results/results.json."""
    from autograder.grader import gradescope

    return gradescope.run(args.root)


def reference_curves(args) -> int:
    """Re-measure the reference's training curves that feedback reports draw."""
    from autograder.grader.report import reference

    print(f"wrote {reference.write()}")
    return 0


def _existing_folder(folder: Path) -> None:
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a folder")


def _graded(folder: Path, options, json_output: bool = False):
    """The grade of `folder` (engine.GradeOptions), showing where it is on a terminal (nothing in a --json run)."""
    from autograder.grader.engine import grade as grade_folder
    from autograder.public.progress import for_terminal

    return grade_folder(folder, options, progress=for_terminal(json_output=json_output))


def _show(
    report, json_path: Path | None = None, report_path: Path | None = None, name: str = "", trained_figures: bool = True
) -> None:
    """Print the table; write results.json and the HTML feedback report where asked."""
    from autograder.public.score_table import table

    print(table(report))
    if json_path:
        from autograder.grader.results import gradescope_results, write_json_atomic

        write_json_atomic(gradescope_results(report), json_path)
        print(f"wrote {json_path}")
    if report_path:
        from autograder.grader.report import write_report

        path = write_report(report, report_path, submission=name, trained_figures=trained_figures)
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")


NO_TRAINED_FIGURES = (
    "leave out of the feedback report the figures of the trained models (what the student's code "
    "returned while it held the hidden scenes: docs/security.md, residual channels)"
)


def parser() -> argparse.ArgumentParser:
    """The command line: each subcommand's handler is its `handler` default."""
    root = argparse.ArgumentParser(prog="python -m autograder", description="Grade captioning submissions.")
    sub = root.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a submission folder (any subset of the seven modules)")
    g.add_argument("submission", type=Path)
    g.add_argument("--json", type=Path, help="write Gradescope's results.json here")
    g.add_argument("--report", type=Path, help="write the HTML feedback report here")
    g.add_argument("--no-trained-figures", action="store_true", help=NO_TRAINED_FIGURES)
    g.add_argument(
        "--staff",
        type=Path,
        nargs="?",
        const=True,
        metavar="PATH",
        help="write the staff view (each "
        "failed check's case and the traceback in the student's file, hidden checks included) to PATH "
        "(default: staff.txt beside --json, else in this folder); never give it to students",
    )
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--part", action="append", choices=MODULES, help="grade only this part (repeatable)")
    g.set_defaults(handler=grade)
    c = sub.add_parser("check", help="run the public checks on a working copy of the assignment")
    c.add_argument("folder", type=Path, nargs="?", default=Path("assignments"))
    c.add_argument("--part", action="append", choices=MODULES, help="check only this part (repeatable)")
    c.add_argument(
        "--train",
        action="store_true",
        help="instead, train each trained part on the public data as its "
        "training check does (same budgets) and print its score, the threshold and the image controls",
    )
    c.set_defaults(handler=check)
    d = sub.add_parser("demo", help="grade the bundled sample submission (partly correct)")
    d.add_argument("--json", type=Path, help="write Gradescope's results.json here")
    d.add_argument("--report", type=Path, help="write the HTML feedback report here")
    d.set_defaults(handler=demo)
    b = sub.add_parser("batch", help="grade every submission in a folder (Gradescope export, folders or zips)")
    b.add_argument("submissions", type=Path)
    b.add_argument("--out", type=Path, required=True, help="where results, grades.csv and histograms.png go")
    where = b.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, default=1, help="submissions graded at once on this machine (default 1)")
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on the dask.distributed cluster whose scheduler "
        "listens at ADDRESS, e.g. tcp://10.0.0.5:8786 (needs the extra .[cluster]; docs/batch.md)",
    )
    b.add_argument(
        "--part",
        action="append",
        choices=MODULES,
        help="regrade only this part (repeatable) of the submissions graded before and merge it into their results",
    )
    b.add_argument(
        "--watchdog",
        type=float,
        metavar="SECONDS",
        help="end a submission whose grade runs longer "
        "(default: the submission's time limit plus 120 s; docs/batch.md)",
    )
    b.add_argument("--force", action="store_true", help="regrade submissions that already have results")
    b.add_argument(
        "--reports", action="store_true", help="also write DIR/<id>/report.html, the feedback report of each submission"
    )
    b.add_argument("--no-trained-figures", action="store_true", help=NO_TRAINED_FIGURES)
    b.add_argument(
        "--gradebook",
        choices=FORMATS,
        help="also write DIR/gradebook-<format>.csv: Canvas's gradebook "
        "import (keyed by submission_metadata.yml's emails and student ids) or one row per check",
    )
    b.add_argument(
        "--similarity",
        action="store_true",
        help="also write DIR/similarity.html and .csv: which "
        "submissions share code, per part, the stubs' code removed (staff only)",
    )
    b.set_defaults(handler=batch)
    sim = sub.add_parser(
        "similarity",
        help="which submissions share code: per part, pairwise, the stubs' code "
        "removed (an HTML report and a CSV, staff only)",
    )
    sim.add_argument(
        "submissions", type=Path, help="what `batch` grades: a Gradescope export or a folder of student folders or zips"
    )
    sim.add_argument(
        "--out", type=Path, required=True, help="the batch's output folder (its summary.html links the report)"
    )
    sim.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="the report shows pairs scoring at least this "
        "share of a module's own code found in the other (default 0.5); the CSV has every pair",
    )
    sim.set_defaults(handler=similarity)
    gb = sub.add_parser("gradebook", help="export a batch's grades for a gradebook (Canvas import, or long format)")
    gb.add_argument("dir", type=Path, metavar="DIR", help="the output folder of `batch`")
    gb.add_argument(
        "--format",
        choices=FORMATS,
        required=True,
        help="canvas: Canvas's gradebook import CSV; long: one row per student and check",
    )
    gb.add_argument("--out", type=Path, required=True, help="the CSV file to write")
    gb.add_argument(
        "--submissions",
        type=Path,
        help="the folder the batch graded: its submission_metadata.yml "
        "(Gradescope's export) gives each student's email and student id",
    )
    gb.add_argument("--assignment", default=DEFAULT_ASSIGNMENT, help="canvas: the assignment's name in Canvas")
    gb.add_argument(
        "--assignment-id",
        help="canvas: the assignment's id in Canvas (the number in its address); "
        "without it Canvas creates a new assignment",
    )
    gb.set_defaults(handler=gradebook)
    z = sub.add_parser("gradescope-zip", help="build the Gradescope autograder zip")
    z.add_argument("--out", type=Path, default=Path("autograder.zip"))
    seed = z.add_mutually_exclusive_group()
    seed.add_argument("--seed", type=int, help="hidden data seed to put in the zip (default: autograder/grader/hidden)")
    seed.add_argument("--new-seed", action="store_true", help="draw a fresh hidden data seed for this zip")
    z.set_defaults(handler=gradescope_zip)
    r = sub.add_parser("gradescope-run", help="inside Gradescope's container: grade ROOT/submission")
    r.add_argument("--root", type=Path, default=Path("/autograder"))
    r.set_defaults(handler=gradescope_run)
    curves = sub.add_parser(
        "reference-curves",
        help="train each reference on the public data and rewrite the "
        "training curves feedback reports draw (autograder/grader/report/reference_curves.json)",
    )
    curves.set_defaults(handler=reference_curves)
    return root


def main(argv: list[str] | None = None) -> int:
    commands = parser()
    args = commands.parse_args(argv)
    try:
        return args.handler(args)
    except UsageError as exc:
        commands.error(str(exc))
