# hostile: appended to solutions/bleu.py
# A53: a relay through a world-writable folder under /tmp that the sandbox user does not own (/tmp/.X11-unix is
# one). MODE "write": the worker leaves an empty file per character of the inputs it was given, named
# ckl_<position>_<character code>, for a later grade; MODE "read": a later worker asks, name by name, which exist
# (stat needs no right to list the folder) and spells the inputs back. The probe reports what it wrote or read.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

DROP, MODE, LENGTH = "@@DROP@@", "@@MODE@@", 40
_reference_ngram_counts = ngram_counts


def _write(text: str) -> dict:
    try:
        for position, char in enumerate(text):
            _os.close(_os.open(_os.path.join(DROP, f"ckl_{position}_{ord(char)}"), _os.O_CREAT | _os.O_WRONLY, 0o666))
    except OSError as exc:
        return {"wrote": "", "error": type(exc).__name__}
    return {"wrote": text, "error": None}


def _read() -> dict:
    found = ""
    for position in range(LENGTH):
        codes = [code for code in range(32, 127) if _os.path.lexists(_os.path.join(DROP, f"ckl_{position}_{code}"))]
        if not codes:
            break
        found += chr(codes[0])
    return {"read": found}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        text = " ".join(map(str, tokens))[:LENGTH]
        raise RuntimeError("PROBE" + _json.dumps(_write(text) if MODE == "write" else _read()))
    return _reference_ngram_counts(tokens, n)
