"""Instructor command line: `python -m instructor {stubs [--check], lint, notebooks [--check], golden [--check],
reproduce, nbgrader-course, handout, secret-sweep, written-pdf}`."""

import argparse
import sys

from instructor import golden, handout, nbgrader_course, notebooks, questions, reproduce, secret_sweep, stubs

# Each command lives in its own module, which adds its subparsers through `register`.
COMMANDS = (stubs, notebooks, golden, reproduce, nbgrader_course, handout, secret_sweep, questions)


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the chosen command; return its exit status."""
    parser = argparse.ArgumentParser(prog="python -m instructor", description="Instructor tooling.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(subparsers)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
