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


def encode(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    payload = buffer.getvalue()
    return HEADER.pack(len(payload)) + payload


def decode(payload: bytes):
    return torch.load(io.BytesIO(payload), weights_only=True, map_location="cpu")


def send(fd: int, obj) -> None:
    view = memoryview(encode(obj))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, remaining = [], n
    while remaining:
        if deadline is not None:
            timeout = deadline - time.monotonic()
            if timeout <= 0 or not select.select([fd], [], [], timeout)[0]:
                raise ChannelTimeout("no reply within the time limit")
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def receive(fd: int, timeout: float | None = None):
    """Read one message; raise ChannelTimeout after `timeout` seconds, ChannelClosed at end of file."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = HEADER.unpack(_read_exactly(fd, HEADER.size, deadline))
    if size > MAX_MESSAGE:
        raise MessageTooLarge(f"a message of {size} bytes exceeds the limit of {MAX_MESSAGE}")
    return decode(_read_exactly(fd, size, deadline))
