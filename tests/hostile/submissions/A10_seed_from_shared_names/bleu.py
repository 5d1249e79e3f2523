# hostile: appended to solutions/bleu.py
# A10: no hidden file is read, only names: the grading folder's shared/ (where training checks put the hidden
# inputs for workers) is listed, and the names come back through a public check's message. A cache file named
# by a hash of its key (which holds the hidden seed) gives the seed away to a brute force over the seeds.
import json
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

shared = os.path.join(os.path.dirname(os.path.dirname(os.getcwd())), "shared")


def _names() -> list:
    try:
        return sorted(os.listdir(shared))
    except Exception as exc:  # noqa: BLE001
        return [type(exc).__name__]


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps({"shared": _names()}))
    return _reference_ngram_counts(tokens, n)
