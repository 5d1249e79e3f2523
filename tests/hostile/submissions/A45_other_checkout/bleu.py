# hostile: appended to solutions/bleu.py
# A45: another checkout of the kit on the same machine (a TA's second clone, CI's): its reference solutions and its
# committed hidden seed, read by path.
import json as _json
import os as _os
import sys as _sys


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
