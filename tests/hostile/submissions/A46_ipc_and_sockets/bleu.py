# hostile: appended to solutions/bleu.py
# A46: channels that outlive the worker or leave it: a POSIX message queue (kept after the grade for whoever comes
# next), an abstract AF_UNIX socket and a world-writable socket file, each held open by a process outside the sandbox.
import ctypes as _ctypes
import json as _json
import os as _os
import socket as _socket
import sys as _sys

# @@RUNTIME_NAMES@@

QUEUE, ABSTRACT, SOCKET_FILE = "@@QUEUE@@", "@@ABSTRACT@@", "@@SOCKET@@"
_reference_ngram_counts = ngram_counts


def _queue() -> str:
    libc = _ctypes.CDLL(None, use_errno=True)
    libc.mq_open.restype = _ctypes.c_int
    fd = libc.mq_open(QUEUE.encode(), _os.O_CREAT | _os.O_RDWR, 0o666, None)
    return "made" if fd >= 0 else f"refused ({_ctypes.get_errno()})"


def _connect(address) -> str:
    try:
        with _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM) as s:
            s.connect(address)
            s.sendall(b"hello from the worker")
        return "connected"
    except OSError as exc:
        return f"{type(exc).__name__} {exc.errno}"


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        found = {"queue": _queue(), "abstract": _connect("\0" + ABSTRACT), "file": _connect(SOCKET_FILE)}
        raise RuntimeError("PROBE" + _json.dumps(found))
    return _reference_ngram_counts(tokens, n)
