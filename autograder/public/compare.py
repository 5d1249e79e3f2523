"""Staged comparison of what student code returned against what the reference expects:
type, then shape and dtype, then finiteness, then values; every message names the tensor and the case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
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


def index_of(flat, shape) -> tuple[int, ...]:
    """The index, in a tensor of `shape`, of flat position `flat` (an int or a one-element tensor). NumPy's, not
    torch.unravel_index, whose argument check imports sympy: about 30 MB and a second in the grading process."""
    return tuple(int(i) for i in np.unravel_index(int(flat), tuple(shape)))


def _where(case: str) -> str:
    return f" [{case}]" if case else ""


@dataclass(frozen=True)
class Tolerance:
    """How close a value must be to what is expected, elementwise: |actual - expected| <= atol + rtol |expected|.
    `float64`, if given, is the (tighter) tolerance that applies when the inputs and the result are all float64.
    Every tolerance a check uses is one of the named ones of autograder.public.tolerances."""

    rtol: float
    atol: float
    float64: Tolerance | None = None

    def for_dtypes(self, inputs: torch.dtype, result: torch.dtype) -> Tolerance:
        """The tolerance for `result` computed from `inputs`."""
        both64 = inputs == torch.float64 and result == torch.float64
        return self.float64 if both64 and self.float64 is not None else self

    def accepts(self, actual: float, expected: float) -> bool:
        """Whether the number `actual` is within this tolerance (its own rtol and atol) of the number `expected`."""
        return abs(actual - expected) <= self.atol + self.rtol * abs(expected)

    def allclose(self, actual: torch.Tensor, expected: torch.Tensor) -> bool:
        """torch.allclose(actual, expected) within this tolerance (its own rtol and atol): every entry within it."""
        return bool(torch.allclose(actual, expected, rtol=self.rtol, atol=self.atol))


def expect_tensor(
    name: str, actual, expected: torch.Tensor, *, tolerance: Tolerance, case: str = "", check_dtype: bool = True
) -> None:
    """Assert that `actual` is a tensor like `expected`, within `tolerance` (|a - e| <= atol + rtol * |e|) everywhere;
    tolerances.EXACT asks for every entry exactly (an input left unchanged)."""
    if not isinstance(actual, torch.Tensor):
        raise CheckFailed(f"{name}: expected a tensor, got {type_name(actual)}{_where(case)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise CheckFailed(f"{name}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}{_where(case)}")
    if check_dtype and actual.dtype != expected.dtype:
        raise CheckFailed(f"{name}: expected dtype {expected.dtype}, got {actual.dtype}{_where(case)}")
    exact = not (expected.is_floating_point() or expected.is_complex())
    if exact and not (actual.is_floating_point() or actual.is_complex()):
        # Values, in a dtype that holds both: casting what is expected to a bool or integer result's dtype would make
        # True match any nonzero value and an integer match its truncation (A69).
        common = torch.promote_types(actual.dtype, expected.dtype)
        mismatch = actual.to(common) != expected.to(actual.device, common)
        if mismatch.any():
            idx = tuple(int(i) for i in mismatch.nonzero()[0])
            raise CheckFailed(
                f"{name}: {int(mismatch.sum())} of {mismatch.numel()} entries differ; first at "
                f"{idx}: got {actual[idx].item()}, expected {expected[idx].item()}{_where(case)}"
            )
        return
    a, e = actual.double(), expected.double().to(actual.device)  # a bool or integer result: its values (True is 1)
    finite = torch.isfinite(e)
    bad = finite & ~torch.isfinite(a)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise CheckFailed(
            f"{name}: {int(bad.sum())} non-finite entries where finite values were expected; "
            f"first at {idx}: {a[idx].item()}{_where(case)}"
        )
    special = ~finite & (a != e)  # -inf where -inf is expected, and so on
    if special.any():
        idx = tuple(int(i) for i in special.nonzero()[0])
        raise CheckFailed(f"{name}: expected {e[idx].item()} at {idx}, got {a[idx].item()}{_where(case)}")
    rtol, atol = tolerance.rtol, tolerance.atol
    err = torch.where(finite, (a - e).abs(), torch.zeros_like(a))
    allowed = atol + rtol * e.abs().where(finite, torch.zeros_like(e))
    over = err > allowed
    if over.any():
        worst = (err - allowed).argmax()
        idx = index_of(worst, err.shape)
        raise CheckFailed(
            f"{name}: {int(over.sum())} of {over.numel()} entries outside rtol={rtol:g}, atol={atol:g}; "
            f"largest error {err[idx].item():.3g} at {idx} (got {a[idx].item():.6g}, expected "
            f"{e[idx].item():.6g}){_where(case)}"
        )


def expect_shaped(name: str, actual, shape: tuple, case: str = "") -> torch.Tensor:
    """Stages 1 and 2: `actual` is a tensor of `shape`; returns it."""
    if not isinstance(actual, torch.Tensor):
        raise CheckFailed(f"{name}: expected a tensor, got {type_name(actual)}{_where(case)}")
    expect(
        tuple(actual.shape) == tuple(shape), f"{name}: expected shape {tuple(shape)}, got {tuple(actual.shape)}", case
    )
    return actual


def expect_float_tensor(name: str, actual, shape: tuple, case: str = "") -> torch.Tensor:
    """Stages 1 to 3 for a float result whose dtype is free: a tensor of `shape`, floating point; returns it."""
    expect_shaped(name, actual, shape, case)
    expect(actual.is_floating_point(), f"{name}: expected a floating-point tensor, got dtype {actual.dtype}", case)
    return actual


def expect_close(
    name: str,
    actual,
    expected: torch.Tensor,
    tolerance: Tolerance,
    *,
    inputs: torch.dtype,
    case: str = "",
    same_dtype: bool = False,
) -> None:
    """The staged comparison of a float result with an expectation computed in float64 from inputs of dtype `inputs`:
    a tensor, of the expected shape, of a float dtype (same_dtype: the inputs' dtype, except that float64 inputs may
    give float32 results, a float32 accumulator somewhere), then its values within `tolerance` (its float64 one
    when inputs and result are float64)."""
    expect_shaped(name, actual, tuple(expected.shape), case)
    if same_dtype:
        allowed = (torch.float64, torch.float32) if inputs == torch.float64 else (inputs,)
        expect(actual.dtype in allowed, f"{name}: expected dtype {inputs}, got {actual.dtype}", case)
    else:
        expect(actual.is_floating_point(), f"{name}: expected a floating-point tensor, got dtype {actual.dtype}", case)
    tol = tolerance.for_dtypes(inputs, actual.dtype)
    expect_tensor(name, actual, expected, tolerance=tol, case=case, check_dtype=False)


def expect(condition: bool, message: str, case: str = "", safe: str = "") -> None:
    if not condition:
        raise CheckFailed(message + _where(case), safe=safe)


def expect_token_ids(name: str, tokens, vocab_size: int, case: str = "") -> None:
    """`tokens` must be a LongTensor (torch.int64, as every docstring of the kit says of token ids) of ids in
    0 .. vocab_size - 1. Checked before the grader counts or indexes with them: an id sizes what the grader
    allocates (bincount, one-hot), so a wild one is the student's failure, named here, and never the grader's
    memory."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype != torch.int64:
        raise CheckFailed(
            f"{name}: expected a LongTensor (torch.int64) of token ids, got {type_name(tokens)}"
            + (f" of dtype {tokens.dtype}" if isinstance(tokens, torch.Tensor) else "")
            + _where(case)
        )
    bad = (tokens < 0) | (tokens >= vocab_size)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise CheckFailed(f"{name}: token id {int(tokens[idx])} at {idx} is outside 0..{vocab_size - 1}" + _where(case))


def expect_tuple(name: str, value, length: int, case: str = "", *, exact: bool = False) -> tuple:
    """`value` must be a tuple (or, unless `exact`, a list) of `length` items; returns it as a tuple. `exact` is for
    what student code returns where its docstring promises a tuple: a state of the decoding protocol must be one (the
    kit's decoders refuse a list), and the other returns keep the same contract."""
    kinds = tuple if exact else (tuple, list)
    if not isinstance(value, kinds) or len(value) != length:
        got = f"{type_name(value)} of length {len(value)}" if isinstance(value, (tuple, list)) else type_name(value)
        raise CheckFailed(f"{name}: expected a tuple of {length}, got {got}{_where(case)}")
    return tuple(value)
