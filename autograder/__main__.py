"""`python -m autograder ...`: the grader's command line (autograder/grader/cli.py)."""

import sys

from autograder.grader import clean_start


def main(argv: list[str] | None = None) -> int:
    """The command line (autograder.grader.cli.main), imported only after a grading command's clean start."""
    from autograder.grader.cli import main as command_line

    return command_line(argv)


if __name__ == "__main__":
    # A grading command forks its template first (autograder/grader/clean_start.py).
    clean_start.start(grading=sys.argv[1:2] != [] and sys.argv[1] in clean_start.COMMANDS)
    code = main()
    if sys.argv[1:2] == ["check"]:  # a student's loop: no interpreter teardown (autograder.public.checker.exit_now)
        from autograder.public.checker import exit_now

        exit_now(code)
    sys.exit(code)
