# hostile: appended to solutions/bleu.py
# A31: in a TA's batch, the other submissions, their results and reports lie next to each other and the grader's
# command line names them. Read a classmate's decoding.py and report.html, and count the processes of other
# users the worker can see.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

_reference_ngram_counts = ngram_counts


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return "read" if f.read(1) is not None else "empty"
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__


def _others() -> int:
    me = _os.getuid()
    count = 0
    for entry in _os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += _os.stat(f"/proc/{entry}").st_uid != me
            except OSError:
                pass
    return count


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps({"submission": _read("@@SUBMISSIONS@@/alice/decoding.py"),
                                                  "report": _read("@@OUT@@/alice/report.html"),
                                                  "results": _read("@@OUT@@/alice/results.json"),
                                                  "other_processes": _others()}))
    return _reference_ngram_counts(tokens, n)
