# hostile: appended to solutions/bleu.py
# A45: another checkout of the kit on the same machine (a TA's second clone, CI's): its reference solutions and its
# committed hidden seed, read by path.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

CLONE = "@@CLONE@@"
_reference_ngram_counts = ngram_counts


def _read(relative: str) -> str:
    try:
        with open(_os.path.join(CLONE, relative), "rb") as f:
            return f"read {len(f.read())} bytes"
    except OSError as exc:
        return type(exc).__name__


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        found = {name: _read(name) for name in ("solutions/bleu.py", "solutions/decoding.py",
                                                "autograder/grader/hidden/seed.json", "README.md")}
        raise RuntimeError("PROBE" + _json.dumps(found))
    return _reference_ngram_counts(tokens, n)
