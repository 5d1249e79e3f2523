"""Reading a worker's reply under a Budget, in the grading process: every message a worker sends is student-made, for
all the grader knows, so it is read by pickle's Python reader, with the opcodes `encode` writes and no other, no
list, tuple or dict in two places, and limits on values, depth and data (the kit's security notes, A50). The 2,854
replies of a full grade of the reference take 0.23 CPU s to read that way, 0.07 s with the C reader (the same replies,
best of five runs); a reply at the budget's edge (2 ** 20 values) about 0.7 s, and `client.replies.is_plain` 0.1 s
more. autograder.worker.protocol.decode reads a reply this way when it is given a budget.
"""

from __future__ import annotations

import io
import pickle
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.worker.message_codec import (
    _PLAIN_GLOBALS,
    MAX_DEPTH,
    MAX_DIMS,
    MAX_MESSAGE,
    TensorRef,
    _parts,
    _resolve,
    _tensors,
    torch_globals,
)
from autograder.worker.message_errors import ChannelTimeout, MalformedMessage, OverBudget


@dataclass(frozen=True)
class Budget:
    """What reading one reply may cost the grading process, however the reply was made. The largest reply of a full
    grade of the reference holds 117 values, 6 deep, and 3.2 MB of data; a reply is a tree: a list, tuple or dict
    in two places of it (which pickle writes once) is refused, so nothing that walks it walks more than it holds."""

    values: int = 2**20  # values in the reply, containers included, each place counted
    data_bytes: int = 4 * MAX_MESSAGE  # bytes of its strings, bytes, integers and tensors' storages, each place counted
    depth: int = MAX_DEPTH  # containers within containers


REPLY = Budget()


# -- reading a reply under a budget (the grading process) -------------------------------------------------------------
# pickle's C reader builds what a pickle asks in C, where nothing can stop it: a dict keyed by a tuple that holds
# another tuple twice, 60 levels down, is hashed as a tree of 2 ** 60 tuples. A reply is read by pickle's own
# Python reader instead, with the opcodes `encode` writes and no other, a reference back to an earlier list, tuple
# or dict refused (so the reply is a tree no larger than its pickle), dicts filled one item at a time, and the
# deadline looked at every few hundred steps.

_LEAVES = (str, bytes, int, float, bool, type(None), TensorRef)  # what a pickle may refer back to (and classes)
_CONTAINERS = (list, tuple, dict, OrderedDict, set, frozenset, bytearray)
_OPCODES = (
    "PROTO",
    "FRAME",
    "STOP",
    "MARK",
    "POP",
    "POP_MARK",
    "NONE",
    "NEWTRUE",
    "NEWFALSE",
    "BININT",
    "BININT1",
    "BININT2",
    "LONG1",
    "LONG4",
    "BINFLOAT",
    "SHORT_BINUNICODE",
    "BINUNICODE",
    "BINUNICODE8",
    "SHORT_BINBYTES",
    "BINBYTES",
    "BINBYTES8",
    "EMPTY_LIST",
    "APPEND",
    "APPENDS",
    "LIST",
    "EMPTY_TUPLE",
    "TUPLE",
    "TUPLE1",
    "TUPLE2",
    "TUPLE3",
    "EMPTY_DICT",
    "DICT",
    "SETITEM",
    "SETITEMS",
    "STACK_GLOBAL",
    "REDUCE",
    "MEMOIZE",
    "PUT",
    "BINPUT",
    "LONG_BINPUT",
    "GET",
    "BINGET",
    "LONG_BINGET",
)
STEPS_BETWEEN_LOOKS = 512  # opcodes (or values) between two looks at the deadline


class _Meter:
    """Counts a reading's steps and ends it, by ChannelTimeout, once `deadline` (time.monotonic()) has passed."""

    def __init__(self, deadline: float | None):
        self.deadline, self.steps = deadline, 0

    def step(self) -> None:
        self.steps += 1
        if self.deadline is not None and self.steps % STEPS_BETWEEN_LOOKS == 0 and time.monotonic() > self.deadline:
            raise ChannelTimeout("the reply was not read within the time limit")


def _metered(load):
    def run(self):
        self.meter.step()
        load(self)

    return run


class _Budgeted(pickle._Unpickler):
    """pickle's Python reader with only the opcodes a message needs; `allowed` maps (module, name) to what a
    pickle may name. No list, tuple or dict is read twice (memo references to one are refused)."""

    memo: dict[int, Any]  # pickle's reader sets these two in load()
    append: Callable[[Any], None]

    dispatch = {
        getattr(pickle, name)[0]: _metered(pickle._Unpickler.dispatch[getattr(pickle, name)[0]]) for name in _OPCODES
    }

    def __init__(self, data: bytes, allowed: dict, meter: _Meter):
        super().__init__(io.BytesIO(data))
        self.allowed, self.meter, self.refers = allowed, meter, False

    def find_class(self, module, name):
        found = self.allowed.get((module, name))
        if found is None and module == "torch" and self.allowed:
            found = torch_globals().get((module, name))
        if found is None:
            raise MalformedMessage(f"a message may not name {module}.{name}")
        self.refers = self.refers or found is TensorRef
        return found

    def _fetch(self, index: int) -> None:
        if index not in self.memo:
            raise MalformedMessage("a reference to nothing the message holds")
        value = self.memo[index]
        if isinstance(value, _CONTAINERS):
            raise OverBudget("it holds a list, tuple or dict in two places")
        self.append(value)

    def load_get(self):
        self._fetch(int(self.readline()[:-1]))

    def load_binget(self):
        self._fetch(self.read(1)[0])

    def load_long_binget(self):
        self._fetch(struct.unpack("<I", self.read(4))[0])

    def load_setitems(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) not in (dict, OrderedDict):
            raise MalformedMessage("items set on something that is not a dict")
        for i in range(0, len(items), 2):  # one at a time: keys that share a hash cost a look at the deadline each
            self.meter.step()
            target[items[i]] = items[i + 1]

    def load_setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        if type(self.stack[-1]) not in (dict, OrderedDict):
            raise MalformedMessage("an item set on something that is not a dict")
        self.stack[-1][key] = value

    def load_reduce(self):
        args = self.stack.pop()
        make = self.stack[-1]
        torch = sys.modules.get("torch")
        if make is OrderedDict and args == ():
            self.stack[-1] = OrderedDict()
        elif make is TensorRef and len(args) == 1 and type(args[0]) is int:
            self.stack[-1] = TensorRef(args[0])
        elif (
            torch is not None
            and make is torch.Size
            and len(args) == 1
            and type(args[0]) is tuple
            and len(args[0]) <= MAX_DIMS
            and all(type(n) is int for n in args[0])
        ):
            self.stack[-1] = torch.Size(args[0])
        else:
            raise MalformedMessage("a message may make an empty OrderedDict, a tensor reference or a torch.Size only")


_Budgeted.dispatch.update(
    {
        getattr(pickle, name)[0]: _metered(getattr(_Budgeted, f"load_{name.lower()}"))
        for name in ("GET", "BINGET", "LONG_BINGET", "SETITEMS", "SETITEM", "REDUCE")
    }
)


def _decode_within(payload: bytes, budget: Budget, meter: _Meter):
    rows, blobs, structure = _parts(_Budgeted(payload, {}, meter).load())
    if sum(len(b) for b in blobs) > len(payload) or len(rows) > budget.values:  # each storage once, as written
        raise OverBudget("its tensors' storages are larger than the message")
    tensors = _tensors(rows, blobs)
    obj = _Budgeted(structure, _PLAIN_GLOBALS, meter).load()
    tally = _Tally(budget, meter, tensors)
    tally.count(obj, 0)
    return _resolve(obj, tensors, {}) if tally.refers else obj


class _Tally:
    """Counts a decoded reply's values, depth and data against its budget (each place counted: the reply is a tree)."""

    def __init__(self, budget: Budget, meter: _Meter, tensors: list):
        self.budget, self.meter, self.tensors = budget, meter, tensors
        self.values = self.data = 0
        self.refers = False

    def count(self, obj, depth: int) -> None:
        self.values += 1
        self.meter.step()
        if self.values > self.budget.values:
            raise OverBudget(f"it holds more than {self.budget.values:,} values")
        kind = type(obj)
        if kind is list or isinstance(obj, tuple):  # torch.Size is a tuple
            self._within(depth)
            for item in obj:
                self.count(item, depth + 1)
        elif kind in (dict, OrderedDict):
            self._within(depth)
            for key, value in obj.items():
                self.count(key, depth + 1)
                self.count(value, depth + 1)
        elif kind is TensorRef:
            self.refers = True
            if 0 <= obj < len(self.tensors):
                self._add(self.tensors[obj].untyped_storage().nbytes())
        elif kind in (str, bytes):
            self._add(len(obj))
        elif kind is int:
            self._add(obj.bit_length() // 8)

    def _within(self, depth: int) -> None:
        if depth >= self.budget.depth:
            raise OverBudget(f"it is nested more than {self.budget.depth} deep")

    def _add(self, size: int) -> None:
        self.data += size
        if self.data > self.budget.data_bytes:
            raise OverBudget(f"it holds more than {self.budget.data_bytes // 2**20} MiB of data")
