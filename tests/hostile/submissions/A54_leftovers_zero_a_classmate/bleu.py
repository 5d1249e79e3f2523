# hostile: appended to solutions/bleu.py
# A54: leftovers that zero a classmate. The worker leaves COUNT empty files (more than the worker's file limit) in a
# world-writable folder under /tmp that the sandbox user does not own, then answers correctly; the next worker of
# the same sandbox user (a classmate's, in a batch) must not be charged for them. The probe reports how many it left.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

DROP, COUNT = "@@DROP@@", 4200
_reference_ngram_counts = ngram_counts
_left = []


def _leave() -> dict:
    try:
        for i in range(COUNT):
            _os.close(_os.open(_os.path.join(DROP, f"left-{_os.getpid()}-{i}"), _os.O_CREAT | _os.O_WRONLY, 0o666))
            _left.append(i)
    except OSError as exc:
        return {"left": len(_left), "error": type(exc).__name__}
    return {"left": len(_left), "error": None}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder.") and not _left:
        raise RuntimeError("PROBE" + _json.dumps(_leave()))
    return _reference_ngram_counts(tokens, n)
