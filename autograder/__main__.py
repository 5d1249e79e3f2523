"""`python -m autograder ...`: the grader's command line (autograder/grader/cli.py)."""

import sys

from autograder.grader.cli import main

if __name__ == "__main__":
    code = main()
    if sys.argv[1:2] == ["check"]:  # a student's loop: no interpreter teardown (autograder.public.checker.exit_now)
        from autograder.public.checker import exit_now

        exit_now(code)
    sys.exit(code)
