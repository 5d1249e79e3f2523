# hostile: appended to solutions/bleu.py
# A33: what the worker may still do to the machine: its capabilities and no_new_privs, a seccomp filter, a new
# user namespace (root in it), an Internet socket, ptrace.
import ctypes as _ctypes
import json as _json
import socket as _socket
import sys as _sys

# @@RUNTIME_NAMES@@

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
