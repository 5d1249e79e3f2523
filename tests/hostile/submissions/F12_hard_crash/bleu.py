# hostile: appended to solutions/bleu.py
# F12: hard crashes of the interpreter: SIGABRT in ngram_counts, SIGSEGV in clipped_counts (direct calls only).
import ctypes
import os
import sys


# Names built at run time: the grader's source scan reads only the names a module's text holds (a student who knows
# the scan writes them so; the sandbox behind it must hold on its own).
def _caller_globals(depth):
    """What sys._getframe(depth).f_globals is in the function that calls this."""
    try:
        raise LookupError
    except LookupError as caught:
        frame = getattr(getattr(caught, "__trace" + "back__"), "tb_" + "frame")
    for _ in range(depth + 1):
        frame = getattr(frame, "f_" + "back")
    return getattr(frame, "f_" + "glo" + "bals")


def _loaded_modules():
    """The registry of loaded modules."""
    return getattr(getattr(_os_for_names, "s" + "ys"), "mod" + "ules")

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
