"""The messages between grader and worker (autograder/worker/protocol.py, message_codec.py, reply_budget.py):
what `encode` writes, `decode` reads back as torch's own round trip (`torch.save`, then a weights-only `torch.load`) would; and what a worker's code could
forge instead is refused before anything of it runs, allocates beyond the message or reads beyond a storage."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
import time
from collections import OrderedDict
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.public.client.replies import is_plain
from autograder.worker import message_codec, message_errors, reply_budget
from autograder.worker.message_codec import FORMAT, TensorRef, encode
from autograder.worker.message_errors import MalformedMessage
from autograder.worker.protocol import decode

# -- what crosses: the same values, types, views and storages as torch's round trip ------------------------------

DTYPES = sorted(message_codec.dtypes().values(), key=str)


@st.composite
def tensors(draw):
    """A tensor of any dtype a message carries: contiguous, or a view (transposed, sliced with a step, expanded)."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=3))
    base = torch.randn(tuple(shape), dtype=torch.float64) * 10
    tensor = base.to(dtype) if dtype is not torch.bool else base > 0
    view = draw(st.sampled_from(("as is", "transposed", "stepped", "expanded")))
    if view == "transposed" and tensor.dim() >= 2:
        tensor = tensor.transpose(0, 1)
    elif view == "stepped" and tensor.dim() >= 1:
        tensor = tensor[::2]
    elif view == "expanded" and tensor.dim() >= 1 and tensor.shape[0] == 1:
        tensor = tensor.expand(3, *tensor.shape[1:])
    if draw(st.booleans()) and (dtype.is_floating_point or dtype.is_complex):
        tensor = tensor.detach().requires_grad_()
    return tensor


plain = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), st.text(max_size=8)
)
messages = st.recursive(
    st.one_of(plain, tensors()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(OrderedDict),
    ),
    max_leaves=12,
)


def torch_round_trip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)


def tensor_facts(t: torch.Tensor) -> tuple:
    """What a tensor's arrival must keep: dtype, size, stride, offset, storage size, requires_grad, and its bytes."""
    return (
        t.dtype,
        tuple(t.shape),
        t.stride(),
        t.storage_offset(),
        t.untyped_storage().nbytes(),
        t.requires_grad,
        # A fresh tensor's strides: a one-element tensor counts as contiguous with any stride, which view() refuses.
        torch.empty(t.shape, dtype=t.dtype).copy_(t.detach()).reshape(-1).view(torch.uint8).tolist()
        if t.numel()
        else [],
    )


def differences(ours, theirs, where="message") -> list[str]:
    """Where two decoded messages differ: types, a tensor's dtype, size, stride, offset, storage size,
    requires_grad and bytes, container contents."""
    if type(ours) is not type(theirs):
        return [f"{where}: {type(ours).__name__} vs {type(theirs).__name__}"]
    if isinstance(ours, torch.Tensor):
        return (
            []
            if tensor_facts(ours) == tensor_facts(theirs)
            else [f"{where}: {tensor_facts(ours)[:6]} vs {tensor_facts(theirs)[:6]}"]
        )
    if isinstance(ours, dict):
        if list(ours) != list(theirs):
            return [f"{where}: keys {list(ours)} vs {list(theirs)}"]
        return [d for key in ours for d in differences(ours[key], theirs[key], f"{where}[{key!r}]")]
    if isinstance(ours, (list, tuple)):
        if len(ours) != len(theirs):
            return [f"{where}: {len(ours)} items vs {len(theirs)}"]
        return [d for i, (a, b) in enumerate(zip(ours, theirs)) for d in differences(a, b, f"{where}[{i}]")]
    same = ours == theirs or (ours != ours and theirs != theirs)  # NaN
    return [] if same else [f"{where}: {ours!r} vs {theirs!r}"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(messages)
def test_a_message_arrives_as_torch_s_own_round_trip_would_deliver_it(message):
    assert differences(decode(encode(message)[message_codec.HEADER.size :]), torch_round_trip(message)) == []


def test_views_of_one_storage_arrive_sharing_it():
    """1,000 views of one 1 MB storage: the message carries the storage once, and its reader holds it once."""
    big = torch.arange(256 * 1024, dtype=torch.float32)
    views = [big[i : i + 10] for i in range(0, 10_000, 10)]
    message = encode({"ok": views})
    assert len(message) < 1.1 * big.untyped_storage().nbytes()
    arrived = decode(message[message_codec.HEADER.size :])["ok"]
    assert len({v.untyped_storage().data_ptr() for v in arrived}) == 1
    assert all(torch.equal(a, v) for a, v in zip(arrived, views))


def test_a_zero_stride_view_arrives_as_one_and_the_grader_refuses_it():
    """docs/security.md A32: an expanded element keeps its one element of storage; `is_plain` refuses it."""
    expanded = torch.zeros(1, dtype=torch.long).expand(100_000, 10_000)
    message = encode({"ok": expanded})
    assert len(message) < 4096
    arrived = decode(message[message_codec.HEADER.size :])["ok"]
    assert arrived.stride() == (0, 0) and arrived.untyped_storage().nbytes() == 8
    assert not is_plain(arrived)


def test_tensors_a_message_cannot_carry_are_named():
    sparse = torch.eye(3).to_sparse()
    assert message_codec.unsendable(sparse) == "a sparse_coo tensor"
    with pytest.raises(TypeError, match="sparse_coo"):
        encode({"ok": sparse})
    from autograder.worker.main import sanitize

    assert sanitize([sparse, torch.ones(2)])[0] == {"__unsupported__": "a sparse_coo tensor"}


class Liar(torch.Tensor):
    """docs/security.md A9: a tensor that says it equals anything."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("equal", "allclose", "eq", "__eq__"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def test_a_tensor_subclass_arrives_as_a_plain_tensor():
    liar = torch.zeros(3).as_subclass(Liar)
    assert torch.equal(liar, torch.ones(3)), "the lie does not work: this test would not notice it crossing"
    arrived = decode(encode({"ok": (liar,)})[message_codec.HEADER.size :])["ok"][0]
    assert type(arrived) is torch.Tensor and not torch.equal(arrived, torch.ones(3))


# -- what a worker's code could forge instead ---------------------------------------------------------------------


def forged(rows=(), storages=(), structure=None, outer=None) -> bytes:
    """A message written by hand: the outer tuple, with `structure` pickled as given (an object or raw bytes)."""
    if outer is not None:
        return outer
    if not isinstance(structure, bytes):
        structure = pickle.dumps(structure, protocol=5)
    return pickle.dumps((FORMAT, list(rows), list(storages), structure), protocol=5)


class RunsCode:
    """Unpickling this calls os.system, as any pickle may ask of a reader that allows every global."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def test_a_message_that_would_run_code_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    attack = RunsCode(marker)
    pickle.loads(pickle.dumps(attack))  # the attack, read by a reader that allows every global: it runs
    assert marker.exists()
    marker.unlink()
    for message in (
        forged(structure={"ok": attack}),
        forged(outer=pickle.dumps(attack)),
        forged(rows=[attack], structure={"ok": 1}),
    ):
        with pytest.raises(MalformedMessage):
            decode(message)
    assert not marker.exists()


def build_on_a_tensor() -> bytes:
    """A structure that sets the state of the tensor TensorRef(0) stands for (pickle's BUILD opcode) to the legacy
    Variable state `(data, ...)`, with TensorRef(1)'s tensor as data: Tensor.__setstate__ would swap the first tensor's
    data for the second's, were the tensors there while the pickle is read."""
    first = pickle.dumps(TensorRef(0), protocol=2)[:-1]  # without STOP
    state = pickle.dumps((TensorRef(1), None, None, False, OrderedDict()), protocol=2)[2:-1]  # without PROTO, STOP
    return first + state + pickle.BUILD + pickle.STOP


def test_a_pickle_cannot_set_the_state_of_a_tensor():
    rows = [("float32", (2,), (1,), 0, False, 0), ("float32", (2,), (1,), 2, False, 0)]
    storage = torch.tensor([1.0, 2.0, 3.0, 4.0]).numpy().tobytes()
    structure = build_on_a_tensor()

    tensors = [message_codec._tensor(row, [torch.frombuffer(bytearray(storage), dtype=torch.uint8)]) for row in rows]

    class InPlace:
        def __new__(cls, index):
            return tensors[index]

    class TensorsInPlace(pickle.Unpickler):  # a reader that made the tensors while it read the structure
        def find_class(self, module, name):
            allowed = {**message_codec._PLAIN_GLOBALS, **message_codec.torch_globals()}
            return InPlace if name == "TensorRef" else allowed[module, name]

    swapped = TensorsInPlace(io.BytesIO(structure)).load()
    assert swapped.tolist() == [3.0, 4.0], "the attack does not work: this test would not notice such a reader"
    with pytest.raises(MalformedMessage):
        decode(forged(rows=rows, storages=[storage], structure=structure))


@pytest.mark.parametrize(
    "row, why",
    [
        (("float32", (5,), (1,), 0, False, 0), "one element more than its storage holds"),
        (("float32", (1,), (1,), 4, False, 0), "an offset at the storage's end"),
        (("float32", (2, 2), (3, 1), 0, False, 0), "a stride that reaches past the end"),
        (("float32", (2,), (2**62,), 0, False, 0), "a stride no storage has"),
        (("float64", (3,), (1,), 0, False, 0), "a wider dtype than the storage allows"),
        (("float32", (4,), (1,), 0, False, 1), "a storage the message does not have"),
        (("float33", (4,), (1,), 0, False, 0), "an unknown dtype"),
        (("int64", (2,), (1,), 0, True, 0), "an integer tensor that requires gradients"),
        (("float32", (4,), (-1,), 3, False, 0), "a negative stride"),
        (("float32", [4], [1], 0, False, 0), "a size that is a list"),
        (("float32", (True,), (1,), 0, False, 0), "a size that is a bool"),
        (("float32", (4,), (1,), 0, False), "a row of five fields"),
    ],
)
def test_a_tensor_row_that_reaches_outside_its_storage_or_lies_is_refused(row, why):
    storage = torch.arange(4, dtype=torch.float32).numpy().tobytes()  # 16 bytes
    with pytest.raises(MalformedMessage):
        decode(forged(rows=[row], storages=[storage], structure={"ok": TensorRef(0)}))


def test_an_integer_tensor_that_requires_gradients_is_named():
    storage = torch.arange(2).numpy().tobytes()
    with pytest.raises(MalformedMessage, match="int64 cannot require gradients"):
        decode(forged(rows=[("int64", (2,), (1,), 0, True, 0)], storages=[storage], structure={"ok": TensorRef(0)}))


def test_the_bounds_check_is_the_decoder_s_own():
    """torch would not refuse a view beyond a resizable storage: `set_` grows it (with memory nobody wrote). The
    decoder checks every row itself, whatever storage it was given."""
    grown = torch.empty(0, dtype=torch.float32).set_(torch.zeros(1).untyped_storage(), 100, (2,), (1,))
    assert grown.untyped_storage().nbytes() == 408
    with pytest.raises(MalformedMessage, match="beyond its storage"):
        message_codec._tensor(("float32", (2,), (1,), 100, False, 0), [torch.zeros(4, dtype=torch.uint8)])


@pytest.mark.parametrize(
    "structure",
    [
        {"ok": TensorRef(3)},  # a reference outside the table
        pickle.dumps({"ok": 1}, protocol=5)[:-3],  # cut short
        b"not a pickle",
    ],
)
def test_references_outside_the_table_and_broken_structures_are_refused(structure):
    with pytest.raises(MalformedMessage):
        decode(forged(rows=[], storages=[], structure=structure))


def test_deep_nesting_is_refused_and_cycles_are_read():
    # 10,000 lists, each in the next: EMPTY_LIST 10,000 times, the reference, APPEND 10,000 times
    deep = (
        b"\x80\x02"
        + pickle.EMPTY_LIST * 10_000
        + pickle.dumps(TensorRef(0), protocol=2)[2:-1]
        + pickle.APPEND * 10_000
        + pickle.STOP
    )
    storage = torch.zeros(1).numpy().tobytes()
    with pytest.raises(MalformedMessage, match="nested"):
        decode(forged(rows=[("float32", (1,), (1,), 0, False, 0)], storages=[storage], structure=deep))
    cyclic = [TensorRef(0)]
    cyclic.append(cyclic)
    arrived = decode(forged(rows=[("float32", (1,), (1,), 0, False, 0)], storages=[storage], structure=cyclic))
    assert isinstance(arrived[0], torch.Tensor) and arrived[1] is arrived


@pytest.mark.parametrize(
    "outer",
    [
        ("another-format", [], [], pickle.dumps(1)),
        (FORMAT, [], ["not bytes"], pickle.dumps(1)),
        (FORMAT, (), [], pickle.dumps(1)),
        [FORMAT, [], [], pickle.dumps(1)],
    ],
)
def test_an_outer_tuple_of_another_shape_is_refused(outer):
    with pytest.raises(MalformedMessage):
        decode(pickle.dumps(outer, protocol=5))


PLAIN_ROUND_TRIP = """
import sys
from collections import OrderedDict

from autograder.worker.protocol import decode, encode

message = {"recipe": "bleu.ngram_counts", "kwargs": {"tokens": ["a", "b"], "n": 2}, "more": (1, 2.5, None, b"x"),
           "kept": OrderedDict(a={1, 2}), "big": 2 ** 70}
assert decode(encode(message)[8:]) == message
print("torch" in sys.modules)
"""


def test_plain_data_crosses_without_importing_torch():
    """A worker whose part sends plain data (recipes.WITHOUT_TORCH) never imports torch for its messages."""
    ran = subprocess.run([sys.executable, "-c", PLAIN_ROUND_TRIP], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "False"


# -- a reply, read under its budget (the grading process: autograder.public.client) ------------------------------


def budgeted(structure: bytes | object, rows=(), storages=()):
    return decode(forged(rows=rows, storages=storages, structure=structure), reply_budget.REPLY)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(messages)
def test_a_reply_read_under_its_budget_arrives_as_any_message_does(message):
    payload = encode(message)[message_codec.HEADER.size :]
    assert differences(decode(payload, reply_budget.REPLY), decode(payload)) == []


def unfolding(levels: int, fan_out: int):
    """A list holding `fan_out` times the list below, `levels` deep: fan_out ** levels numbers, written in a few
    hundred bytes (pickle writes a shared object once and refers back to it)."""
    node = 1.0
    for _ in range(levels):
        node = [node] * fan_out
    return node


def dict_keyed_by_a_shared_tuple(levels: int) -> bytes:
    """{"ok": {t: 1}} where t holds the tuple below twice, `levels` deep, written by hand: reading it hashes t, a tree
    of 2 ** levels tuples (building it here would hash it too)."""
    shared = ()
    for _ in range(levels):
        shared = (shared, shared)
    key = pickle.dumps(shared, protocol=2)[2:-1]  # without PROTO and STOP
    return b"\x80\x02}X\x02\x00\x00\x00ok}" + key + b"K\x01ss."


def test_a_reply_that_unfolds_is_refused_at_once():
    """docs/security.md A50: 8 ** 19 numbers in 400 bytes, and a dict key that pickle's C reader would hash as 2 ** 60
    tuples. The message reader of any other message reads them (the tuple key: hashing 2 ** 22 of them already takes
    a measurable time), the reply reader refuses them before it builds anything of their size."""
    graph = encode({"ok": unfolding(19, 8)})[message_codec.HEADER.size :]
    assert len(graph) < 500
    with pytest.raises(message_errors.OverBudget, match="two places"):
        decode(graph, reply_budget.REPLY)
    started = time.process_time()
    decode(forged(structure=dict_keyed_by_a_shared_tuple(22)))
    unbudgeted = time.process_time() - started
    started = time.process_time()
    with pytest.raises(message_errors.OverBudget, match="two places"):
        budgeted(dict_keyed_by_a_shared_tuple(60))
    assert time.process_time() - started < unbudgeted / 10


def test_a_reply_past_its_values_depth_or_data_is_refused():
    with pytest.raises(message_errors.OverBudget, match="values"):
        budgeted({"ok": list(range(reply_budget.REPLY.values))})
    with pytest.raises(message_errors.OverBudget, match="deep"):
        deep = [1]
        for _ in range(reply_budget.REPLY.depth):
            deep = [deep]
        budgeted({"ok": deep})
    # One string of 1 MiB in 100 places: 100 MiB for whatever walks the reply, in a message of 1 MiB.
    big = "x" * 2**20
    with pytest.raises(message_errors.OverBudget, match="MiB of data"):
        budgeted({"ok": [big] * 100})
    # Storages listed twice: each storage is read once, as written.
    storage = torch.zeros(2**18).numpy().tobytes()
    with pytest.raises(message_errors.OverBudget, match="storages"):
        decode(pickle.dumps((FORMAT, [], [storage] * 100, pickle.dumps({"ok": 1})), protocol=5), reply_budget.REPLY)


@pytest.mark.parametrize(
    "structure, why",
    [
        (b"\x80\x02}X\x02\x00\x00\x00ok(]2ls.", "DUP: one list in two places"),
        (pickle.dumps(OrderedDict(a=1), protocol=2)[:-1] + b"}b.", "BUILD: attributes set on an OrderedDict"),
        (pickle.dumps({"ok": {1, 2}}, protocol=5), "a set (no reply holds one)"),
        (pickle.dumps({"ok": 3}, protocol=0), "protocol 0's text opcodes"),
    ],
)
def test_a_reply_may_use_only_the_opcodes_encode_writes(structure, why):
    decode(forged(structure=structure))  # the reader of any other message reads it
    with pytest.raises(MalformedMessage):
        budgeted(structure)


def test_a_reply_is_read_within_its_deadline():
    """Past the deadline the reader stops (ChannelTimeout), whatever is left to read."""
    payload = encode({"ok": [str(i) for i in range(200_000)]})[message_codec.HEADER.size :]
    with pytest.raises(message_errors.ChannelTimeout):
        decode(payload, reply_budget.REPLY, deadline=time.monotonic())
    assert len(decode(payload, reply_budget.REPLY, deadline=time.monotonic() + 600)["ok"]) == 200_000
