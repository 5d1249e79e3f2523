"""Reference ops made unavailable while a parity-checked function runs, so calling the oracle earns nothing.

Each name maps to the attributes that reach the op. While blocked, calling any of them raises
ForbiddenOpError naming the op. A static scan of the submitted source (autograder.sandbox.staging)
covers the spellings that bypass these attributes.
"""
from __future__ import annotations

import contextlib
import importlib

import torch


class ForbiddenOpError(RuntimeError):
    pass


# name -> (module path, attribute) pairs to block.
OPS: dict[str, tuple[tuple[str, str], ...]] = {
    "rnn_cell": (("torch.nn.RNNCell", "forward"), ("torch.nn.RNN", "forward"), ("torch", "rnn_relu_cell"),
                 ("torch", "rnn_relu"), ("torch", "rnn_tanh_cell"), ("torch._VF", "rnn_relu_cell"),
                 ("torch._VF", "rnn_relu")),
    "lstm_cell": (("torch.nn.LSTMCell", "forward"), ("torch.nn.LSTM", "forward"), ("torch", "lstm_cell"),
                  ("torch", "lstm"), ("torch._VF", "lstm_cell"), ("torch._VF", "lstm")),
    "sdpa": (("torch.nn.functional", "scaled_dot_product_attention"),
             ("torch.nn.functional", "multi_head_attention_forward"), ("torch.nn.MultiheadAttention", "forward")),
}
READABLE = {"rnn_cell": "nn.RNNCell / nn.RNN", "lstm_cell": "nn.LSTMCell / nn.LSTM",
            "sdpa": "F.scaled_dot_product_attention"}


def _resolve(path: str):
    module_path, _, cls = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(importlib.import_module(module_path), cls)


def _blocker(op: str, what: str):
    def blocked(*args, **kwargs):
        raise ForbiddenOpError(f"{READABLE[op]} is the reference this check compares against; "
                               f"it cannot be used inside the checked function ({what} was called)")
    return blocked


@contextlib.contextmanager
def forbid(*ops: str):
    """Within the block, every attribute listed for each op raises ForbiddenOpError."""
    saved = []
    try:
        for op in ops:
            for owner_path, attr in OPS[op]:
                owner = _resolve(owner_path)
                if hasattr(owner, attr):
                    saved.append((owner, attr, getattr(owner, attr)))
                    setattr(owner, attr, _blocker(op, f"{owner_path}.{attr}"))
        yield
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)
