"""`python -m autograder.public check [FOLDER] [--part MODULE ...]`: the public checker (checker.py)."""

from autograder.public.checker import exit_now, main

if __name__ == "__main__":
    exit_now(main())
