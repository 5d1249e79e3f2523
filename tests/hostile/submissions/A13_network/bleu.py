# hostile: appended to solutions/bleu.py
# A13: reach the network: a TCP connection and a UDP datagram to a public DNS server, a name lookup, and the
# list of network interfaces.
# (A namespace leaves only the loopback interface; a seccomp filter refuses every socket but a Unix one.)
import json
import socket
import sys

# @@RUNTIME_NAMES@@


def _attempt(action) -> str:
    try:
        action()
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _tcp():
    socket.create_connection(("1.1.1.1", 53), timeout=3).close()


def _udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"\0" * 12, ("1.1.1.1", 53))


def _interfaces():
    try:
        return sorted(name for _, name in socket.if_nameindex())
    except Exception as exc:  # noqa: BLE001 (a seccomp filter refuses the socket it needs)
        return type(exc).__name__


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        found = {"tcp": _attempt(_tcp), "udp": _attempt(_udp),
                 "dns": _attempt(lambda: socket.getaddrinfo("pypi.org", 443)),
                 "interfaces": _interfaces()}
        raise RuntimeError("PROBE" + json.dumps(found, separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
