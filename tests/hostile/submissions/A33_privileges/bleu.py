# hostile: appended to solutions/bleu.py
# A33: what the worker may still do to the machine: its capabilities and no_new_privs, a seccomp filter, a new
# user namespace (root in it), an Internet socket, ptrace.
import ctypes as _ctypes
import json as _json
import socket as _socket
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

_reference_ngram_counts = ngram_counts
CLONE_NEWUSER = 0x10000000


def _status() -> dict:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return {k: fields[k].strip() for k in ("NoNewPrivs", "Seccomp", "CapEff", "CapPrm", "CapBnd", "CapAmb")}


def _syscall(fn) -> str:
    try:
        return "allowed" if fn() == 0 else f"refused ({_ctypes.get_errno()})"
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__


def _socket_inet() -> str:
    try:
        _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM).close()
        return "allowed"
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        libc = _ctypes.CDLL(None, use_errno=True)
        found = {"status": _status(), "user_namespace": "unchecked", "socket": _socket_inet(),
                 "ptrace": _syscall(lambda: libc.ptrace(16, 1, 0, 0))}                 # PTRACE_ATTACH to PID 1
        # Last: a new user namespace would change the answers above.
        found["user_namespace"] = _syscall(lambda: libc.unshare(CLONE_NEWUSER))
        raise RuntimeError("PROBE" + _json.dumps(found))
    return _reference_ngram_counts(tokens, n)
