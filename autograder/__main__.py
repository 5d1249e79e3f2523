"""Command line of the grader.

    python -m autograder grade SUBMISSION_DIR [--json PATH] [--public-only] [--part MODULE ...]
    python -m autograder check [DIR]     # the public checks on your working copy (default: assignments/)
    python -m autograder demo [--json PATH]   # grade the bundled, partly correct sample submission
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
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--part", action="append", choices=MODULES, help="grade only this part (repeatable)")
    c = sub.add_parser("check", help="run the public checks on a working copy of the assignment")
    c.add_argument("folder", type=Path, nargs="?", default=Path("assignments"))
    c.add_argument("--part", action="append", choices=MODULES, help="check only this part (repeatable)")
    d = sub.add_parser("demo", help="grade the bundled sample submission (partly correct)")
    d.add_argument("--json", type=Path, help="write Gradescope's results.json here")
    args = parser.parse_args(argv)

    import tempfile

    from autograder import sample
    from autograder.engine import grade
    from autograder.results import gradescope_results, table, write_json_atomic

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
        report = grade(folder, public_only=public_only, parts=parts)
    print(table(report))
    if getattr(args, "json", None):
        write_json_atomic(gradescope_results(report), args.json)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
