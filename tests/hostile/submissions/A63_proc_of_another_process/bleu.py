# hostile: appended to solutions/bleu.py
# A63: another process's /proc files as a relay. Where the worker has no PID namespace of its own (Docker's
# capabilities), /proc lists every process of the machine, and a process's stat file (its memory size, its threads)
# is readable by any user: a submission graded at the same time can show what it does there to this worker, which
# polls it. The probe reports what reading the grading process's stat file (@@PID@@) gave, and how many processes
# /proc lists.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

_reference_ngram_counts = ngram_counts


def _probe() -> dict:
    try:
        with open("/proc/@@PID@@/stat") as stat:
            read = stat.read()[:20]
    except OSError as exc:
        read = type(exc).__name__
    try:
        listed = sum(name.isdigit() for name in _os.listdir("/proc"))
    except OSError as exc:
        listed = type(exc).__name__
    return {"stat": read, "listed": listed}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps(_probe()))
    return _reference_ngram_counts(tokens, n)
