"""Give freed memory back to the operating system between checks.

A training run or a large property example leaves glibc's heap holding the pages of freed tensors; the
grader and a worker live side by side for a whole grade, so what either keeps adds to the container's
peak. Used by the engine after every check and by the worker after every recipe call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from typing import Any

_malloc_trim: Any  # libc's malloc_trim, or None where there is none
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _malloc_trim = _libc.malloc_trim
    _malloc_trim.argtypes, _malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
    _malloc_trim = None


def release_memory() -> None:
    """Collect garbage cycles, then return the free top and free pages of every malloc arena."""
    gc.collect()
    trim_heap()


def trim_heap() -> None:
    """Return the free pages of every malloc arena, without a garbage collection (which costs tens of ms with torch
    loaded): cheap enough to call between the many same-sized calls of a loop."""
    if _malloc_trim is not None:
        _malloc_trim(0)
