"""`python -m autograder ...`: the grader's command line (autograder/grader/cli.py)."""
import sys

from autograder.grader.cli import main

if __name__ == "__main__":
    sys.exit(main())
