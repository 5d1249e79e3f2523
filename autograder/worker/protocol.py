"""Messages between the grading process and the worker: length-prefixed, and only plain data crosses: tensors,
numbers, strings, bytes, None, lists, tuples, dicts (OrderedDict too), sets, torch.Size and dtypes; never an object
that runs code when it is read.

This module sends and receives them (`send`, `receive`) and decodes one (`decode`). How a message is written and
read back, and why it is safe to read: autograder.worker.message_codec; how the grading process reads a worker's
reply within its budget: autograder.worker.reply_budget; what can go wrong: autograder.worker.message_errors.
"""

from __future__ import annotations

import os
import select
import time

from autograder.worker.message_codec import HEADER, MAX_MESSAGE, _decode, encode
from autograder.worker.message_errors import ChannelClosed, ChannelTimeout, MalformedMessage, MessageTooLarge
from autograder.worker.reply_budget import Budget, _decode_within, _Meter


def clean(text: str, limit: int) -> str:
    """Printable text only (newlines and tabs kept), capped: what student code says reaches feedback."""
    text = "".join(ch for ch in str(text) if ch in "\n\t" or (ch.isprintable() and ch not in "\x1b\r"))
    return text if len(text) <= limit else text[:limit] + " [...]"


def decode(payload: bytes, budget: Budget | None = None, deadline: float | None = None):
    """The message `encode` wrote; MalformedMessage for anything else. With `budget` (a reply, read by the grading
    process), read by the budgeted reader: OverBudget for a message that would cost more, ChannelTimeout once
    `deadline` (time.monotonic()) passes while it is read."""
    try:
        return _decode(payload) if budget is None else _decode_within(payload, budget, _Meter(deadline))
    except (MalformedMessage, ChannelTimeout):
        raise
    except Exception as exc:  # noqa: BLE001 (pickle and torch raise many kinds on bad input)
        raise MalformedMessage(f"not a message ({type(exc).__name__})") from None


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


WATCH_EVERY = 0.5  # seconds between two calls of a receive's `watch` while it waits


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


def receive(fd: int, timeout: float | None = None, watch=None, budget: Budget | None = None):
    """Read one message; raise ChannelTimeout after `timeout` seconds (reading it included), ChannelClosed at end of
    file. While it waits, `watch()` (if given) is called every WATCH_EVERY seconds; what it raises ends the wait.
    `budget`: the message is a reply, read within it (decode)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = HEADER.unpack(_read_exactly(fd, HEADER.size, deadline, watch))
    if size > MAX_MESSAGE:
        raise MessageTooLarge(f"a message of {size} bytes exceeds the limit of {MAX_MESSAGE}")
    return decode(_read_exactly(fd, size, deadline, watch), budget, deadline)
