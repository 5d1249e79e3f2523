# hostile: appended to solutions/bleu.py
# A18: read another submission graded on the same machine at the same time (a TA's batch, or CI grading the
# reference). Its grading folder is easy to find: `ls /tmp` lists every captionkit-grade-*, and
# /proc/<pid>/cmdline of every worker names its --staging folder. VICTIM is one such folder.
import json
import os
import sys

# @@RUNTIME_NAMES@@

VICTIM = "@@VICTIM@@"


def _look() -> dict:
    path = os.path.join(VICTIM, "bleu", "staging", "bleu.py")
    try:
        with open(path) as f:
            text = f.read()
        return {"read": len(text), "marker": "HOSTILE-VICTIM-MARKER" in text}
    except Exception as exc:  # noqa: BLE001
        return {"read": type(exc).__name__}


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(_look()))
    return _reference_ngram_counts(tokens, n)
