"""Messages between the grading process and the worker: length-prefixed `torch.save` payloads,
always loaded with `weights_only=True`, so only tensors, numbers, strings, None and plain containers
ever cross the boundary; never arbitrary pickled objects."""
from __future__ import annotations

import io
import os
import select
import struct
import time

import torch

HEADER = struct.Struct("!Q")
MAX_MESSAGE = 512 * 1024 * 1024


class ChannelClosed(EOFError):
    """The other side closed its end (it exited or was killed)."""


class ChannelTimeout(TimeoutError):
    """No complete message arrived before the deadline."""


class MessageTooLarge(ValueError):
    """A message announced more bytes than MAX_MESSAGE."""


def clean(text: str, limit: int) -> str:
    """Printable text only (newlines and tabs kept), capped: what student code says reaches feedback."""
    text = "".join(ch for ch in str(text) if ch in "\n\t" or (ch.isprintable() and ch not in "\x1b\r"))
    return text if len(text) <= limit else text[:limit] + " [...]"


def encode(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    payload = buffer.getvalue()
    return HEADER.pack(len(payload)) + payload


def decode(payload: bytes):
    return torch.load(io.BytesIO(payload), weights_only=True, map_location="cpu")


def send(fd: int, obj, timeout: float | None = None) -> None:
    """Write one message; with `timeout`, raise ChannelTimeout if the reader has not taken it all by then (a
    reader that stops reading, or shrinks its pipe, must not hold the writer). The grader writes with a timeout
    on a non-blocking descriptor (see `nonblocking`); the worker writes without one."""
    deadline = None if timeout is None else time.monotonic() + timeout
    view = memoryview(encode(obj))
    while view:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise ChannelTimeout("the other side did not read the message within the time limit")
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # writable, but not for this much: wait again
            continue
        view = view[written:]


def nonblocking(fd: int) -> int:
    """`fd`, set non-blocking, so that `send` with a timeout never blocks in a write."""
    os.set_blocking(fd, False)
    return fd


WATCH_EVERY = 0.5   # seconds between two calls of a receive's `watch` while it waits


def _read_exactly(fd: int, n: int, deadline: float | None, watch=None) -> bytes:
    chunks, remaining = [], n
    while remaining:
        if deadline is not None or watch is not None:
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                raise ChannelTimeout("no reply within the time limit")
            wait = WATCH_EVERY if watch is not None and (timeout is None or timeout > WATCH_EVERY) else timeout
            if not select.select([fd], [], [], wait)[0]:
                if watch is not None:
                    watch()
                continue
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, timeout: float | None = None, watch=None):
    """Read one message; raise ChannelTimeout after `timeout` seconds, ChannelClosed at end of file. While it
    waits, `watch()` (if given) is called every WATCH_EVERY seconds; what it raises ends the wait."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = HEADER.unpack(_read_exactly(fd, HEADER.size, deadline, watch))
    if size > MAX_MESSAGE:
        raise MessageTooLarge(f"a message of {size} bytes exceeds the limit of {MAX_MESSAGE}")
    return decode(_read_exactly(fd, size, deadline, watch))
