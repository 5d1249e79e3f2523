"""How a message is written and read back (autograder.worker.protocol sends and receives it).

A message is a pickle of four things: FORMAT, the tensor table (per tensor: dtype, size, stride, storage offset,
requires_grad and the index of its storage), the storages (raw bytes, one per storage however many tensors view it)
and the message's structure, itself a pickle in which each tensor stands as a TensorRef (its row in the table).
`protocol.decode` reads the outer pickle with no class at all allowed and the structure with only TensorRef,
OrderedDict, torch.Size and torch's dtypes allowed (pickle.Unpickler.find_class), checks every row against its storage
before it makes a view of it, and only then puts the tensors in place of their references. So:

- nothing a message names is called but those four (a pickle's REDUCE of anything else is refused by find_class);
- no tensor exists while the unpickler runs, so a pickle cannot `BUILD` one (Tensor.__setstate__ would `set_` it);
- a view never reaches outside its storage (`Tensor.set_` would not refuse it: it grows a resizable storage, and the
  storages here are not resizable either);
- views of one storage share it on arrival as they did on departure, so a message costs its reader about its own size.

It replaced `torch.save` and a weights-only `torch.load` (same guarantees, read by a slower, general parser): a grade
sends about 5,800 messages, which took 3.6 CPU s to write and read that way and take 0.6 s this way
(the kit's grader notes).

torch is imported only for a message that holds a tensor or names a torch class: a worker whose part sends plain data
(Part 3, BLEU) writes and reads its messages without ever importing it (autograder.worker.main.preload).
"""

from __future__ import annotations

import functools
import io
import math
import pickle
import struct
import sys
from collections import OrderedDict
from typing import TYPE_CHECKING

from autograder.worker.message_errors import MalformedMessage

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
