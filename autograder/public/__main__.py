"""`python -m autograder.public check [FOLDER] [--part MODULE ...]`: the public checker (checker.py)."""
import sys

from autograder.public.checker import main

if __name__ == "__main__":
    sys.exit(main())
