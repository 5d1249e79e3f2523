# hostile: appended to solutions/bleu.py
# A46: channels that outlive the worker or leave it: a POSIX message queue (kept after the grade for whoever comes
# next), an abstract AF_UNIX socket and a world-writable socket file, each held open by a process outside the sandbox.
import ctypes as _ctypes
import json as _json
import os as _os
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
