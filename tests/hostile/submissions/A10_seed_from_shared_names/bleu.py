# hostile: appended to solutions/bleu.py
# A10: no hidden file is read, only names: the grading folder's shared/ (where training checks put the hidden
# inputs for workers) is listed, and the names come back through a public check's message. A cache file named
# by a hash of its key (which holds the hidden seed) gives the seed away to a brute force over the seeds.
import json
import os
import sys

# @@RUNTIME_NAMES@@

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
