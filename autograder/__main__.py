"""Command line of the grader.

    python -m autograder grade SUBMISSION_DIR [--json PATH] [--report PATH.html] [--public-only] [--part MODULE ...]
    python -m autograder check [DIR]     # the public checks on your working copy (default: assignments/)
    python -m autograder demo [--json PATH] [--report PATH.html]   # grade the bundled, partly correct sample
    python -m autograder batch SUBMISSIONS --out DIR [--jobs N | --scheduler ADDRESS] [--part MODULE ...] [--force]
                               [--reports]   # a whole class, for TAs (docs/batch.md)
    python -m autograder reference-curves   # re-measure the reference's training curves the reports draw
    python -m autograder gradescope-zip --out autograder.zip [--seed N | --new-seed]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shared.parts import MODULES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade captioning submissions.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade a submission folder (any subset of the seven modules)")
    g.add_argument("submission", type=Path)
    g.add_argument("--json", type=Path, help="write Gradescope's results.json here")
    g.add_argument("--report", type=Path, help="write the HTML feedback report here")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--part", action="append", choices=MODULES, help="grade only this part (repeatable)")
    g.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)  # benchmarks only: no sandbox
    c = sub.add_parser("check", help="run the public checks on a working copy of the assignment")
    c.add_argument("folder", type=Path, nargs="?", default=Path("assignments"))
    c.add_argument("--part", action="append", choices=MODULES, help="check only this part (repeatable)")
    d = sub.add_parser("demo", help="grade the bundled sample submission (partly correct)")
    d.add_argument("--json", type=Path, help="write Gradescope's results.json here")
    d.add_argument("--report", type=Path, help="write the HTML feedback report here")
    b = sub.add_parser("batch", help="grade every submission in a folder (Gradescope export, folders or zips)")
    b.add_argument("submissions", type=Path)
    b.add_argument("--out", type=Path, required=True, help="where results, grades.csv and histograms.png go")
    where = b.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=int, default=1, help="submissions graded at once on this machine (default 1)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="grade on the dask.distributed cluster whose scheduler "
                       "listens at ADDRESS, e.g. tcp://10.0.0.5:8786 (needs the extra .[cluster]; docs/batch.md)")
    b.add_argument("--part", action="append", choices=MODULES, help="regrade only this part (repeatable) of the "
                   "submissions graded before and merge it into their results")
    b.add_argument("--force", action="store_true", help="regrade submissions that already have results")
    b.add_argument("--reports", action="store_true", help="also write DIR/<id>/report.html, the feedback report of "
                   "each submission")
    z = sub.add_parser("gradescope-zip", help="build the Gradescope autograder zip")
    z.add_argument("--out", type=Path, default=Path("autograder.zip"))
    seed = z.add_mutually_exclusive_group()
    seed.add_argument("--seed", type=int, help="hidden data seed to put in the zip (default: autograder/grader/hidden)")
    seed.add_argument("--new-seed", action="store_true", help="draw a fresh hidden data seed for this zip")
    r = sub.add_parser("gradescope-run", help="inside Gradescope's container: grade ROOT/submission")
    r.add_argument("--root", type=Path, default=Path("/autograder"))
    sub.add_parser("reference-curves", help="train each reference on the public data and rewrite the training "
                   "curves feedback reports draw (autograder/grader/report/reference_curves.json)")
    args = parser.parse_args(argv)

    if args.command == "reference-curves":
        from autograder.grader.report import reference
        print(f"wrote {reference.write()}")
        return 0

    if args.command == "gradescope-zip":
        from autograder.grader import gradescope
        path = gradescope.build_zip(args.out, gradescope.new_seed() if args.new_seed else args.seed)
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
        return 0
    if args.command == "gradescope-run":
        from autograder.grader import gradescope
        return gradescope.run(args.root)
    if args.command == "batch":
        from autograder.grader import batch
        from autograder.grader.intake import IntakeError
        if args.jobs < 1:
            parser.error(f"--jobs: expected a whole number >= 1, got {args.jobs}")
        try:
            rows = batch.run(args.submissions, args.out, jobs=args.jobs, force=args.force, reports=args.reports,
                             parts=tuple(args.part) if args.part else None, scheduler=args.scheduler)
        except (IntakeError, ValueError) as exc:
            parser.error(str(exc))
        print(f"graded {sum(r['status'] == 'graded' for r in rows)} of {len(rows)} submissions; "
              f"wrote {args.out / 'grades.csv'}, {args.out / 'histograms.png'} and {args.out / 'summary.html'}"
              + (f" and a report.html per submission in {args.out}" if args.reports else ""))
        return 0

    import tempfile

    from autograder.grader import sample
    from autograder.grader.engine import grade
    from autograder.public.progress import for_terminal
    from autograder.grader.results import gradescope_results, table, write_json_atomic

    with tempfile.TemporaryDirectory(prefix="captionkit-sample-") as tmp:
        if args.command == "demo":
            folder = sample.build(Path(tmp) / "submission")
            print(sample.__doc__)
        else:
            folder = args.submission if args.command == "grade" else args.folder
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
        public_only = args.command == "check" or getattr(args, "public_only", False)
        parts = tuple(args.part) if getattr(args, "part", None) else None
        report = grade(folder, public_only=public_only, parts=parts, in_process=getattr(args, "in_process", False),
                       progress=for_terminal(json_output=getattr(args, "json", None) is not None))
    print(table(report))
    if getattr(args, "json", None):
        write_json_atomic(gradescope_results(report), args.json)
        print(f"wrote {args.json}")
    if getattr(args, "report", None):
        from autograder.grader.report import write_report
        name = "the sample submission" if args.command == "demo" else args.submission.resolve().name
        path = write_report(report, args.report, submission=name)
        print(f"wrote {path} ({path.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
