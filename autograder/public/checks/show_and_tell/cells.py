"""Part 1 public checks, the ReLU step: relu_rnn_step against nn.RNNCell, without and with the image term."""

from __future__ import annotations

import math

import torch
from hypothesis import given
from torch import nn

from autograder.public.checks import check
from autograder.public.compare import (
    expect_close,
)
from autograder.public.strategies import (
    DTYPES,
    FEW,
    step_cases,
)
from autograder.public.tolerances import (
    RNN_STEP,
)

F64 = torch.float64


def _randn(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=F64) * scale


def _step_inputs(case, with_image: bool):
    seed, n, e, h, dtype = case
    g = torch.Generator().manual_seed(seed)
    cast = DTYPES[dtype]
    inputs = {
        "x": _randn(g, n, e),
        "h": _randn(g, n, h),
        "W_xh": _randn(g, h, e, scale=1 / math.sqrt(e)),
        "W_hh": _randn(g, h, h, scale=1 / math.sqrt(h)),
        "b": _randn(g, h, scale=0.5),
        "image_term": _randn(g, n, h) if with_image else None,
    }
    inputs = {k: (v.to(cast) if v is not None else None) for k, v in inputs.items()}
    describe = (
        f"x ({n}, {e}), h_prev ({n}, {h}), W_xh ({h}, {e}), W_hh ({h}, {h}), b ({h},), "
        f"image_term {f'({n}, {h})' if with_image else 'None'}, {dtype}, standard normal inputs, seed={seed}"
    )
    return inputs, describe


def rnn_cell_oracle(x, h, W_xh, W_hh, b, image_term=None) -> torch.Tensor:
    """nn.RNNCell(nonlinearity='relu') in float64 with weight_ih = W_xh, weight_hh = W_hh, bias_ih = b,
    bias_hh = 0. An image term is one more input to the cell: x' = [x, image_term], weight_ih = [W_xh, I]."""
    x, h, W_xh, W_hh, b = (t.to(F64) for t in (x, h, W_xh, W_hh, b))
    hidden = W_xh.shape[0]
    if image_term is not None:
        x = torch.cat([x, image_term.to(F64)], 1)
        W_xh = torch.cat([W_xh, torch.eye(hidden, dtype=F64)], 1)
    cell = nn.RNNCell(W_xh.shape[1], hidden, nonlinearity="relu", dtype=F64)
    with torch.no_grad():
        cell.weight_ih.copy_(W_xh)
        cell.weight_hh.copy_(W_hh)
        cell.bias_ih.copy_(b)
        cell.bias_hh.zero_()
        return cell(x, h)


def _relu_step_property(student, case, with_image: bool) -> None:
    inputs, describe = _step_inputs(case, with_image)
    got = student.call("show_and_tell.relu_step", **inputs)
    expected = rnn_cell_oracle(**inputs)
    expect_close(
        "relu_rnn_step(x, h_prev, W_xh, W_hh, b" + (", image_term)" if with_image else ")"),
        got,
        expected,
        RNN_STEP,
        inputs=inputs["x"].dtype,
        case=describe,
    )


@check()
def relu_rnn_step_matches_rnn_cell(student, ctx):
    """relu_rnn_step without an image term equals nn.RNNCell(nonlinearity='relu') with the same weights."""

    @FEW
    @given(step_cases(4, 6))
    def prop(case):
        _relu_step_property(student, case, with_image=False)

    prop()


@check()
def relu_rnn_step_adds_the_image_term(student, ctx):
    """relu_rnn_step adds image_term inside the ReLU (nn.RNNCell with the image as an extra input)."""

    @FEW
    @given(step_cases(4, 6))
    def prop(case):
        _relu_step_property(student, case, with_image=True)

    prop()
