"""Reference ops made unavailable while a parity-checked function runs, so calling the oracle earns nothing.

Three layers. While a recipe that forbids an op runs, every attribute listed for it raises
ForbiddenOpError: that covers looking the op up at call time (`F.scaled_dot_product_attention`, or
`getattr` with a computed name). A torch function mode active at the same time refuses the op however it
is reached: a reference kept at import in a container, a `functools.partial`, or the operator registry
(`torch.ops.aten.scaled_dot_product_attention`) all end in a call that torch hands to the mode by name.
And a reference bound at import where it can be seen (`from torch.nn.functional import
scaled_dot_product_attention as f`, a default argument, a closure, a class attribute) is found by
`bound_references`, which looks for the original objects themselves in what the student's module
reaches; such a module gets no credit from the checks that forbid the op, with a message that says why.
"""

from __future__ import annotations

import contextlib
import functools
import importlib


class ForbiddenOpError(RuntimeError):
    pass


# name -> (module path, attribute) pairs to block.
OPS: dict[str, tuple[tuple[str, str], ...]] = {
    "rnn_cell": (
        ("torch.nn.RNNCell", "forward"),
        ("torch.nn.RNN", "forward"),
        ("torch", "rnn_relu_cell"),
        ("torch", "rnn_relu"),
        ("torch", "rnn_tanh_cell"),
        ("torch._VF", "rnn_relu_cell"),
        ("torch._VF", "rnn_relu"),
        ("torch._C._VariableFunctions", "rnn_relu_cell"),
        ("torch._C._VariableFunctions", "rnn_relu"),
    ),
    "lstm_cell": (
        ("torch.nn.LSTMCell", "forward"),
        ("torch.nn.LSTM", "forward"),
        ("torch", "lstm_cell"),
        ("torch", "lstm"),
        ("torch._VF", "lstm_cell"),
        ("torch._VF", "lstm"),
        ("torch._C._VariableFunctions", "lstm_cell"),
        ("torch._C._VariableFunctions", "lstm"),
    ),
    "sdpa": (
        ("torch.nn.functional", "scaled_dot_product_attention"),
        ("torch._C._nn", "scaled_dot_product_attention"),
        ("torch.nn.functional", "multi_head_attention_forward"),
        ("torch.nn.MultiheadAttention", "forward"),
        ("torch.nn.attention.flex_attention", "flex_attention"),
    ),
}
# name -> the names torch gives the op's functions and operators (an OpOverload's name without its overload),
# which the function mode refuses.
FUNCTION_NAMES: dict[str, tuple[str, ...]] = {
    "rnn_cell": ("rnn_relu_cell", "rnn_relu", "rnn_tanh_cell", "rnn_tanh"),
    "lstm_cell": ("lstm_cell", "lstm"),
    "sdpa": (
        "scaled_dot_product_attention",
        "multi_head_attention_forward",
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention",
        "_fused_sdp_choice",
        "_native_multi_head_attention",
        "_transformer_encoder_layer_fwd",
        "_triton_multi_head_attention",
        "_triton_scaled_dot_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_fused_attention_overrideable",
        "_flash_attention_forward",
        "_efficient_attention_forward",
        "_flash_attention_forward_no_dropout_inplace",
        "flex_attention",
    ),
}
READABLE = {
    "rnn_cell": "nn.RNNCell / nn.RNN",
    "lstm_cell": "nn.LSTMCell / nn.LSTM",
    "sdpa": "F.scaled_dot_product_attention",
}


def _resolve(path: str):
    module_path, _, cls = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(importlib.import_module(module_path), cls)


def _blocker(op: str, what: str):
    def blocked(*args, **kwargs):
        raise ForbiddenOpError(
            f"{READABLE[op]} is the reference this check compares against; "
            f"it cannot be used inside the checked function ({what} was called)"
        )

    return blocked


def originals() -> dict[int, tuple[str, str]]:
    """id(original object) -> (op, where) for every attribute in OPS, resolved now (before any blocking)."""
    found = {}
    for op, places in OPS.items():
        for owner_path, attr in places:
            try:
                value = getattr(_resolve(owner_path), attr)
            except (ImportError, AttributeError):
                continue
            found[id(value)] = (op, f"{owner_path}.{attr}")
            if hasattr(value, "__func__"):
                found[id(value.__func__)] = (op, f"{owner_path}.{attr}")
    return found


def bound_references(module, known: dict[int, tuple[str, str]]) -> dict[str, str]:
    """{op: description} for every reference op that `module` holds on to: in its globals, in the attributes
    of classes it defines, in the defaults and closures of its functions and methods."""
    found: dict[str, str] = {}
    seen: set[int] = set()

    def visit(value, where: str, depth: int) -> None:
        if id(value) in seen or depth > 3:
            return
        seen.add(id(value))
        if id(value) in known:
            op, what = known[id(value)]
            found.setdefault(op, f"{where} is {what}")
            return
        function = getattr(value, "__func__", value)
        if callable(function) and getattr(function, "__module__", None) == module.__name__:
            for default in getattr(function, "__defaults__", None) or ():
                visit(default, f"a default argument of {where}", depth + 1)
            for name, default in (getattr(function, "__kwdefaults__", None) or {}).items():
                visit(default, f"the default of {name} in {where}", depth + 1)
            for cell in getattr(function, "__closure__", None) or ():
                try:
                    visit(cell.cell_contents, f"a variable captured by {where}", depth + 1)
                except ValueError:  # an empty cell
                    pass
        if isinstance(value, type) and value.__module__ == module.__name__:
            for name, member in vars(value).items():
                visit(member, f"{value.__name__}.{name}", depth + 1)

    for name, value in list(vars(module).items()):
        visit(value, name, 0)
    return found


@functools.cache
def _refusing_mode():
    """The class of a torch function mode that raises ForbiddenOpError for the functions and operators of `ops`
    (made on first use: a worker whose part forbids nothing never imports torch for it)."""
    from torch.overrides import TorchFunctionMode

    class RefuseByName(TorchFunctionMode):
        def __init__(self, ops: tuple[str, ...]):
            super().__init__()
            self.op_of = {name: op for op in ops for name in FUNCTION_NAMES[op]}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "").split(".")[0]
            op = self.op_of.get(name)
            if op is not None:
                raise ForbiddenOpError(
                    f"{READABLE[op]} is the reference this check compares against; "
                    f"it cannot be used inside the checked function ({name} was called)"
                )
            return func(*args, **(kwargs or {}))

    return RefuseByName


@contextlib.contextmanager
def forbid(*ops: str):
    """Within the block, every attribute listed for each op raises ForbiddenOpError, and so does any call that
    reaches the op's functions (the function mode)."""
    if not ops:
        yield
        return
    saved = []
    try:
        for op in ops:
            for owner_path, attr in OPS[op]:
                try:
                    owner = _resolve(owner_path)
                    if hasattr(owner, attr):
                        original = getattr(owner, attr)
                        setattr(owner, attr, _blocker(op, f"{owner_path}.{attr}"))
                        saved.append((owner, attr, original))
                except (ImportError, AttributeError, TypeError):  # a builtin type that refuses new attributes
                    continue
        with _refusing_mode()(ops):
            yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)
