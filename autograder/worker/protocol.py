"""Messages between the grading process and the worker: length-prefixed, and only plain data crosses: tensors,
numbers, strings, bytes, None, lists, tuples, dicts (OrderedDict too), sets, torch.Size and dtypes; never an object
that runs code when it is read.

A message is a pickle of four things: FORMAT, the tensor table (per tensor: dtype, size, stride, storage offset,
requires_grad and the index of its storage), the storages (raw bytes, one per storage however many tensors view it)
and the message's structure, itself a pickle in which each tensor stands as a TensorRef (its row in the table).
`decode` reads the outer pickle with no class at all allowed and the structure with only TensorRef, OrderedDict,
torch.Size and torch's dtypes allowed (pickle.Unpickler.find_class), checks every row against its storage before it
makes a view of it, and only then puts the tensors in place of their references. So:

- nothing a message names is called but those four (a pickle's REDUCE of anything else is refused by find_class);
- no tensor exists while the unpickler runs, so a pickle cannot `BUILD` one (Tensor.__setstate__ would `set_` it);
- a view never reaches outside its storage (`Tensor.set_` would not refuse it: it grows a resizable storage, and the
  storages here are not resizable either);
- views of one storage share it on arrival as they did on departure, so a message costs its reader about its own size.

It replaced `torch.save` and a weights-only `torch.load` (same guarantees, read by a slower, general parser): a grade
sends about 5,800 messages, which took 3.6 CPU s to write and read that way and take 0.6 s this way
(the kit's grader notes).

The grading process reads a worker's messages (every one of them is student-made, for all it knows) under a Budget:
pickle's Python reader, the opcodes `encode` writes and no other, no list, tuple or dict in two places, and limits on
values, depth and data (the kit's security notes, A50). The 2,854 replies of a full grade of the reference take 0.23 CPU s to
read that way, 0.07 s with the C reader (the same replies, best of five runs); a reply at the budget's edge (2 ** 20
values) about 0.7 s, and `client.replies.is_plain` 0.1 s more.

torch is imported only for a message that holds a tensor or names a torch class: a worker whose part sends plain data
(Part 3, BLEU) writes and reads its messages without ever importing it (autograder.worker.main.preload).
"""

from __future__ import annotations

import functools
import io
import math
import os
import pickle
import select
import struct
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

HEADER = struct.Struct("!Q")
# The largest message of a full grade of the reference is a reply of 3.2 MB (a request: 2.1 MB; December 2026): the cap
# is five times that, so a reply of float64 where the reference sends float32 still fits.
MAX_MESSAGE = 16 * 1024 * 1024
FORMAT = "captionkit-message-1"
MAX_DEPTH = 64  # containers within containers; the worker's replies stop at 20 (main.sanitize)
MAX_DIMS = 64
MAX_EXTENT = 2**62  # a size, stride or offset beyond this is no tensor's


class MalformedMessage(ValueError):
    """A message that is not one `encode` writes (what a worker's code forged, or a broken channel)."""


class TensorRef(int):
    """A tensor's place in a message's structure: its row in the message's tensor table."""

    __slots__ = ()


DTYPE_NAMES = (
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex64",
    "complex128",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
)  # the dtypes a message carries
# The names a message's structure may use, but torch's (torch_globals).
_PLAIN_GLOBALS = {
    (TensorRef.__module__, TensorRef.__qualname__): TensorRef,  # the name pickle writes for it
    ("collections", "OrderedDict"): OrderedDict,
}


@functools.cache
def dtypes() -> dict[str, torch.dtype]:
    """The dtypes a message carries, by name (imports torch)."""
    import torch

    return {name: getattr(torch, name) for name in DTYPE_NAMES}


@functools.cache
def _dtype_names() -> dict[torch.dtype, str]:
    return {d: name for name, d in dtypes().items()}


@functools.cache
def torch_globals() -> dict[tuple[str, str], object]:
    """The torch names a message's structure may use: torch.Size and the dtypes (imports torch)."""
    import torch

    return {("torch", "Size"): torch.Size, **{("torch", name): d for name, d in dtypes().items()}}


class ChannelClosed(EOFError):
    """The other side closed its end (it exited or was killed)."""


class ChannelTimeout(TimeoutError):
    """No complete message arrived before the deadline."""


class MessageTooLarge(ValueError):
    """A message announced more bytes than MAX_MESSAGE."""


class OverBudget(MalformedMessage):
    """A reply that would cost its reader more than its Budget allows. The message is the grader's own sentence."""


@dataclass(frozen=True)
class Budget:
    """What reading one reply may cost the grading process, however the reply was made. The largest reply of a full
    grade of the reference holds 117 values, 6 deep, and 3.2 MB of data; a reply is a tree: a list, tuple or dict
    in two places of it (which pickle writes once) is refused, so nothing that walks it walks more than it holds."""

    values: int = 2**20  # values in the reply, containers included, each place counted
    data_bytes: int = 4 * MAX_MESSAGE  # bytes of its strings, bytes, integers and tensors' storages, each place counted
    depth: int = MAX_DEPTH  # containers within containers


REPLY = Budget()


def clean(text: str, limit: int) -> str:
    """Printable text only (newlines and tabs kept), capped: what student code says reaches feedback."""
    text = "".join(ch for ch in str(text) if ch in "\n\t" or (ch.isprintable() and ch not in "\x1b\r"))
    return text if len(text) <= limit else text[:limit] + " [...]"


def unsendable(tensor: torch.Tensor) -> str | None:
    """Why `tensor` cannot cross in a message (a sparse, quantized or GPU tensor: the worker sends it as unsupported),
    or None."""
    import torch

    if tensor.layout != torch.strided:
        return f"a {str(tensor.layout).removeprefix('torch.')} tensor"
    if tensor.device.type != "cpu":
        return f"a tensor on {tensor.device}"
    if tensor.dtype not in _dtype_names():
        return f"a tensor of {tensor.dtype}"
    return None


class _Pickler(pickle.Pickler):
    """Pickles a message's structure with each tensor as a TensorRef, and collects the tensor table and storages."""

    def __init__(self, file):
        super().__init__(file, protocol=5)
        self.rows: list[tuple] = []
        self.storages: list[bytes] = []
        self._storage_of: dict[tuple[int, int], int] = {}

    def reducer_override(self, obj):
        torch = sys.modules.get("torch")  # no tensor exists before something imports torch
        if torch is None or not isinstance(obj, torch.Tensor):
            return NotImplemented
        why = unsendable(obj)
        if why is not None:
            raise TypeError(f"a message cannot carry {why}")
        tensor = obj.detach().resolve_conj().resolve_neg()
        storage = tensor.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if key not in self._storage_of:
            self._storage_of[key] = len(self.storages)
            self.storages.append(torch.empty(0, dtype=torch.uint8).set_(storage).numpy().tobytes())
        self.rows.append(
            (
                _dtype_names()[tensor.dtype],
                tuple(tensor.shape),
                tuple(tensor.stride()),
                tensor.storage_offset(),
                bool(obj.requires_grad),
                self._storage_of[key],
            )
        )
        return TensorRef, (len(self.rows) - 1,)


def encode(obj) -> bytes:
    structure = io.BytesIO()
    pickler = _Pickler(structure)
    pickler.dump(obj)
    payload = pickle.dumps((FORMAT, pickler.rows, pickler.storages, structure.getvalue()), protocol=5)
    return HEADER.pack(len(payload)) + payload


class _NoGlobals(pickle.Unpickler):
    """Reads built-in values only: every class or function a pickle names is refused."""

    def find_class(self, module, name):
        raise MalformedMessage(f"a message may not name {module}.{name}")


class _Structure(pickle.Unpickler):
    """Reads a message's structure: TensorRef, OrderedDict, torch.Size and dtypes are the only names it may use."""

    refers = False  # whether the structure asked for TensorRef (else it holds no reference to resolve)

    def find_class(self, module, name):
        found = _PLAIN_GLOBALS.get((module, name))
        if found is None and module == "torch":  # torch is imported only for a message that names it
            found = torch_globals().get((module, name))
        if found is None:
            raise MalformedMessage(f"a message may not name {module}.{name}")
        self.refers = self.refers or found is TensorRef
        return found


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


def _extents(values, what: str) -> tuple[int, ...]:
    if (
        type(values) is not tuple
        or len(values) > MAX_DIMS
        or not all(type(v) is int and 0 <= v <= MAX_EXTENT for v in values)
    ):
        raise MalformedMessage(f"a tensor's {what} is not a tuple of at most {MAX_DIMS} non-negative integers")
    return values


def _tensor(row, storages: list[torch.Tensor]) -> torch.Tensor:
    """The tensor a row of the table describes, a view of its storage, after checking that it lies within it."""
    import torch

    if type(row) is not tuple or len(row) != 6:
        raise MalformedMessage("a tensor's row is not (dtype, size, stride, offset, requires_grad, storage)")
    name, size, stride, offset, requires_grad, index = row
    dtype = dtypes().get(name) if type(name) is str else None
    if dtype is None:
        raise MalformedMessage(f"a tensor of an unknown dtype ({name!r})")
    size, stride = _extents(size, "size"), _extents(stride, "stride")
    if len(size) != len(stride) or type(offset) is not int or not 0 <= offset <= MAX_EXTENT:
        raise MalformedMessage("a tensor's size, stride and offset do not agree")
    if type(index) is not int or not 0 <= index < len(storages) or type(requires_grad) is not bool:
        raise MalformedMessage("a tensor's storage or requires_grad is not one of the message's")
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise MalformedMessage(f"a tensor of {name} cannot require gradients")
    storage = storages[index]
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if math.prod(size) else offset - 1
    if (last + 1) * dtype.itemsize > storage.numel():
        raise MalformedMessage(f"a tensor reaches beyond its storage ({storage.numel()} bytes)")
    tensor = torch.empty(0, dtype=dtype).set_(storage.untyped_storage(), offset, size, stride)
    return tensor.requires_grad_() if requires_grad else tensor


def _resolve(obj, tensors: list[torch.Tensor], done: dict[int, tuple], depth: int = 0):
    """`obj` with every TensorRef replaced by its tensor; lists and dicts in place (so that what the pickle shared,
    or made cyclic, stays so), tuples and sets rebuilt. `done` maps each container seen to (itself, its result):
    holding the container keeps its id from being reused while the walk lasts."""
    kind = type(obj)
    if kind is TensorRef:
        if not 0 <= obj < len(tensors):
            raise MalformedMessage("a tensor reference outside the message's table")
        return tensors[obj]
    if kind not in (list, tuple, dict, OrderedDict, set, frozenset):
        return obj
    if id(obj) in done:
        return done[id(obj)][1]
    if depth > MAX_DEPTH:
        raise MalformedMessage(f"a message nested more than {MAX_DEPTH} deep")
    if kind is list:
        done[id(obj)] = (obj, obj)
        obj[:] = [_resolve(x, tensors, done, depth + 1) for x in obj]
        return obj
    if kind in (dict, OrderedDict):
        done[id(obj)] = (obj, obj)
        items = [
            (_resolve(k, tensors, done, depth + 1), _resolve(v, tensors, done, depth + 1)) for k, v in kind.items(obj)
        ]
        kind.clear(obj)  # the type's own methods: a pickle may have set attributes of these names on an OrderedDict
        kind.update(obj, items)
        return obj
    rebuilt = kind(_resolve(x, tensors, done, depth + 1) for x in obj)
    done[id(obj)] = (obj, rebuilt)
    return rebuilt


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


def _parts(outer) -> tuple[list, list, bytes]:
    if type(outer) is not tuple or len(outer) != 4 or outer[0] != FORMAT:
        raise MalformedMessage("not a message of this format")
    _, rows, blobs, structure = outer
    if (
        type(rows) is not list
        or type(blobs) is not list
        or type(structure) is not bytes
        or not all(type(b) is bytes for b in blobs)
    ):
        raise MalformedMessage("not a message of this format")
    return rows, blobs, structure


def _tensors(rows: list, blobs: list) -> list[torch.Tensor]:
    if not (rows or blobs):
        return []
    import torch

    # Not resizable (frombuffer's): a view beyond its storage would be refused by torch too.
    storages = [
        torch.frombuffer(bytearray(b), dtype=torch.uint8) if b else torch.empty(0, dtype=torch.uint8) for b in blobs
    ]
    return [_tensor(row, storages) for row in rows]


def _decode(payload: bytes):
    rows, blobs, structure = _parts(_NoGlobals(io.BytesIO(payload)).load())
    tensors = _tensors(rows, blobs)
    unpickler = _Structure(io.BytesIO(structure))
    obj = unpickler.load()
    return _resolve(obj, tensors, {}) if unpickler.refers else obj


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
