# hostile: appended to solutions/bleu.py
# F12: hard crashes of the interpreter: SIGABRT in ngram_counts, SIGSEGV in clipped_counts (direct calls only).
import ctypes
import os
import sys

# @@RUNTIME_NAMES@@

_reference_ngram_counts, _reference_clipped_counts = ngram_counts, clipped_counts


def _called_by_the_grader() -> bool:
    return _caller_globals(2).get("__name__", "").startswith("autograder.")


def ngram_counts(tokens, n):
    if _called_by_the_grader():
        os.abort()
    return _reference_ngram_counts(tokens, n)


def clipped_counts(hyp, refs, n):
    if _called_by_the_grader():
        ctypes.string_at(0)
    return _reference_clipped_counts(hyp, refs, n)
