"""Staged comparison of what student code returned against what the reference expects:
type, then shape and dtype, then finiteness, then values; every message names the tensor and the case.
"""
from __future__ import annotations

import torch


class CheckFailed(AssertionError):
    """A check's verdict. The message is for the student when the check is public; hidden checks show
    only the property they test, plus `safe`: a detail that reveals no hidden input or expected value
    (say, the exact match a trained model reached and the threshold)."""

    def __init__(self, message: str, safe: str = ""):
        super().__init__(message)
        self.safe = safe


def type_name(value) -> str:
    if isinstance(value, dict) and "__unsupported__" in value:
        return str(value["__unsupported__"])
    return type(value).__name__


def _where(case: str) -> str:
    return f" [{case}]" if case else ""


def expect_tensor(name: str, actual, expected: torch.Tensor, *, rtol: float, atol: float, case: str = "",
                  check_dtype: bool = True) -> None:
    """Assert that `actual` is a tensor like `expected`, within |a - e| <= atol + rtol * |e| everywhere."""
    if not isinstance(actual, torch.Tensor):
        raise CheckFailed(f"{name}: expected a tensor, got {type_name(actual)}{_where(case)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise CheckFailed(f"{name}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}{_where(case)}")
    if check_dtype and actual.dtype != expected.dtype:
        raise CheckFailed(f"{name}: expected dtype {expected.dtype}, got {actual.dtype}{_where(case)}")
    if actual.dtype == torch.bool or not (actual.is_floating_point() or actual.is_complex()):
        mismatch = actual != expected.to(actual.dtype)
        if mismatch.any():
            idx = tuple(int(i) for i in mismatch.nonzero()[0])
            raise CheckFailed(f"{name}: {int(mismatch.sum())} of {mismatch.numel()} entries differ; first at "
                              f"{idx}: got {actual[idx].item()}, expected {expected[idx].item()}{_where(case)}")
        return
    a, e = actual.double(), expected.double().to(actual.device)
    finite = torch.isfinite(e)
    bad = finite & ~torch.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise CheckFailed(f"{name}: {int(bad.sum())} non-finite entries where finite values were expected; "
                          f"first at {idx}: {a[idx].item()}{_where(case)}")
    special = ~finite & (a != e)  # -inf where -inf is expected, and so on
    if special.any():
        idx = tuple(int(i) for i in special.nonzero()[0])
        raise CheckFailed(f"{name}: expected {e[idx].item()} at {idx}, got {a[idx].item()}{_where(case)}")
    err = torch.where(finite, (a - e).abs(), torch.zeros_like(a))
    allowed = atol + rtol * e.abs().where(finite, torch.zeros_like(e))
    over = err > allowed
    if over.any():
        worst = (err - allowed).argmax()
        idx = tuple(int(i) for i in torch.unravel_index(worst, err.shape))
        raise CheckFailed(f"{name}: {int(over.sum())} of {over.numel()} entries outside rtol={rtol:g}, atol={atol:g}; "
                          f"largest error {err[idx].item():.3g} at {idx} (got {a[idx].item():.6g}, expected "
                          f"{e[idx].item():.6g}){_where(case)}")


def expect(condition: bool, message: str, case: str = "", safe: str = "") -> None:
    if not condition:
        raise CheckFailed(message + _where(case), safe=safe)


def expect_token_ids(name: str, tokens, vocab_size: int, case: str = "") -> None:
    """`tokens` must be an integer tensor of ids in 0 .. vocab_size - 1. Checked before the grader counts or
    indexes with them: an id sizes what the grader allocates (bincount, one-hot), so a wild one is the
    student's failure, named here, and never the grader's memory."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
        raise CheckFailed(f"{name}: expected an integer tensor of token ids, got {type_name(tokens)}"
                          + (f" of dtype {tokens.dtype}" if isinstance(tokens, torch.Tensor) else "") + _where(case))
    bad = (tokens < 0) | (tokens >= vocab_size)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise CheckFailed(f"{name}: token id {int(tokens[idx])} at {idx} is outside 0..{vocab_size - 1}"
                          + _where(case))


def expect_tuple(name: str, value, length: int, case: str = "") -> tuple:
    """`value` must be a tuple (or list) of `length` items; returns it as a tuple."""
    if not isinstance(value, (tuple, list)) or len(value) != length:
        got = f"{type_name(value)} of length {len(value)}" if isinstance(value, (tuple, list)) else type_name(value)
        raise CheckFailed(f"{name}: expected a tuple of {length}, got {got}{_where(case)}")
    return tuple(value)
