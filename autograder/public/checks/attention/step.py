"""Part 4 public checks, the attention step: attend against F.scaled_dot_product_attention, its weights a
distribution, its gradients, and with_coords' cell centres."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import example, given

from autograder.public.checks import check
from autograder.public.compare import (
    CheckFailed,
    expect,
    expect_close,
    expect_shaped,
    expect_tensor,
    expect_tuple,
)
from autograder.public.strategies import FEW, attention_cases, coords_cases, tensor
from autograder.public.tolerances import ATTENTION, ATTENTION_GRAD, ATTENTION_SUMS, COORDS, EXACT

GRID = 8  # the encoder's grid is 8 x 8


# Each property first tries one small but non-degenerate case (its @example): code that fails everywhere (an
# unimplemented stub, a wrong shape) fails there at once, with that case named, instead of after a hundred shrinking
# calls. Code that fails only on some cases is then found (and, in a public check, shrunk) by hypothesis.
PROBE_ATTENTION = (7, 2, 5, 3, 4, 1.0)  # seed, N, L, d, D, scale


PROBE_COORDS = (7, 2, 3, 2)  # seed, N, grid, D


# -- the attention step --------------------------------------------------------------------------------


@check()
def attend_matches_scaled_dot_product_attention(student, ctx):
    """attend returns F.scaled_dot_product_attention's context and the softmax weights over L (float64)."""

    @FEW
    @given(attention_cases)
    @example(PROBE_ATTENTION)
    def prop(case):
        q, k, v, describe = _attention_inputs(case)
        context, weights = _attend(student, q, k, v, describe)
        expect_close(
            "context", context, _sdpa_context(q, k, v), ATTENTION, inputs=torch.float64, case=describe, same_dtype=True
        )
        expect_close(
            "weights", weights, _sdpa_weights(q, k), ATTENTION, inputs=torch.float64, case=describe, same_dtype=True
        )

    prop()


@check()
def attention_weights_are_a_distribution(student, ctx):
    """attend's weights are non-negative and sum to 1 over L; the context lies in the values' convex hull."""

    @FEW
    @given(attention_cases)
    @example(PROBE_ATTENTION)
    def prop(case):
        q, k, v, describe = _attention_inputs(case)
        context, weights = _attend(student, q, k, v, describe)
        _expect_distribution("weights", weights, describe)
        _expect_in_hull(context, v, describe)

    prop()
    expect_weights_depend_on_the_query(student, "weights that are a distribution")


# The anchor of every property that uniform weights satisfy (a distribution, the mean under equal keys, permuting the
# locations): two queries, each aligned with a different one of three keys, must be given different weights.
ANCHOR_QUERY = torch.tensor([[4.0, 0.0], [0.0, 4.0]], dtype=torch.float64)  # (N, d)


ANCHOR_KEYS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], dtype=torch.float64).expand(2, 3, 2).clone()


ANCHOR_VALUES = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], dtype=torch.float64).expand(2, 3, 2).clone()


def expect_weights_depend_on_the_query(student, what: str) -> None:
    """attend gives the two anchor queries different weights (SDPA's differ by 0.7 or more at the first key)."""
    describe = (
        f"the anchor of {what}: query {ANCHOR_QUERY.tolist()}, keys {ANCHOR_KEYS[0].tolist()} and values "
        f"{ANCHOR_VALUES[0].tolist()} for both rows, float64"
    )
    _, weights = _attend(student, ANCHOR_QUERY, ANCHOR_KEYS, ANCHOR_VALUES, describe)
    moved = float((weights[0].double() - weights[1].double()).abs().max())
    expect(
        moved > 1e-2,
        f"your weights do not depend on the query and the keys: weights {weights.tolist()} differ by "
        f"at most {moved:.3g} between a query aligned with the first key and one aligned with the second "
        f"(expected {_sdpa_weights(ANCHOR_QUERY, ANCHOR_KEYS).tolist()})",
        describe,
    )


@check()
def attend_passes_gradients_to_query_keys_and_values(student, ctx):
    """attend is differentiable: gradients reach query, keys and values as through F.scaled_dot_product_attention."""

    @FEW
    @given(attention_cases)
    @example(PROBE_ATTENTION)
    def prop(case):
        q, k, v, describe = _attention_inputs(case)
        seed, n, L = case[0], case[1], case[2]
        context_weights, weight_weights = tensor(seed + 3, n, v.shape[-1]), tensor(seed + 4, n, L)
        describe += ", the gradients of sum(context * tensor(seed + 3, N, D)) + sum(weights * tensor(seed + 4, N, L))"
        inputs = [t.clone().requires_grad_(True) for t in (q, k, v)]
        total = (_sdpa_context(*inputs) * context_weights).sum() + (_sdpa_weights(*inputs[:2]) * weight_weights).sum()
        expected = torch.autograd.grad(total, inputs)
        got = student.call(
            "attention.attend_gradients",
            query=q,
            keys=k,
            values=v,
            context_weights=context_weights,
            weight_weights=weight_weights,
        )
        got = expect_tuple("the gradients (query, keys, values)", got, 3, describe)
        for name, g, e in zip(("query", "keys", "values"), got, expected):
            expect(
                g is not None and bool(g.abs().sum() > 0) or not bool(e.abs().sum() > 0),
                f"no gradient reaches {name} through attend's outputs: the weights or the context are cut from "
                f"the graph, so attention could not learn where to look",
                describe,
            )
            expect_close(
                f"d/d {name}",
                g if g is not None else torch.zeros_like(e),
                e,
                ATTENTION_GRAD,
                inputs=torch.float64,
                case=describe,
            )

    prop()


# -- coordinates -----------------------------------------------------------------------------------------


@check()
def with_coords_appends_row_major_cell_centres(student, ctx):
    """with_coords appends each location's (row, col) centre ((index + 0.5) / grid) * 2 - 1, row-major."""

    @FEW
    @given(coords_cases)
    @example(PROBE_COORDS)
    def prop(case):
        seed, n, grid, D = case
        features = tensor(seed, n, grid * grid, D, dtype=torch.float32)
        _check_coords(student, features, grid, f"N={n}, grid={grid}, L={grid * grid}, D={D}, float32, seed={seed}")

    prop()


# -- helpers ---------------------------------------------------------------------------------------------------


def _attention_inputs(case):
    seed, n, L, d, D, scale = case
    q, k, v = tensor(seed, n, d, scale=scale), tensor(seed + 1, n, L, d, scale=scale), tensor(seed + 2, n, L, D)
    describe = f"N={n}, L={L}, d={d}, D={D}, query and keys scaled by {scale}, float64, seed={seed}"
    return q, k, v, describe


def _sdpa_context(q, k, v):
    return F.scaled_dot_product_attention(q.unsqueeze(1), k, v).squeeze(1)


def _sdpa_weights(q, k):
    """SDPA with the identity as values returns the attention weights themselves."""
    n, L = k.shape[:2]
    eye = torch.eye(L, dtype=k.dtype).expand(n, L, L)
    return F.scaled_dot_product_attention(q.unsqueeze(1), k, eye).squeeze(1)


def _attend(student, q, k, v, describe):
    """The student's (context, weights), after checking the inputs came back unchanged and the shapes."""
    out = student.call("attention.attend", query=q, keys=k, values=v)
    result, after = expect_tuple("recipe result", out, 2, describe)
    context, weights = expect_tuple("attend result (context, weights)", result, 2, describe, exact=True)
    for name, before, got in zip(("query", "keys", "values"), (q, k, v), after):
        expect_tensor(
            f"{name} after attend (attend must not modify its inputs)", got, before, tolerance=EXACT, case=describe
        )
    n, L, D = v.shape
    expect_shaped("context", context, (n, D), describe)
    expect_shaped("weights", weights, (n, L), describe)
    return context, weights


def _expect_distribution(name, weights, describe):
    w = weights.double()
    expect(bool(torch.isfinite(w).all()), f"{name}: non-finite entries", describe)
    tol = ATTENTION_SUMS.for_dtypes(torch.float64, weights.dtype).atol
    if (w < -tol).any():
        idx = tuple(int(i) for i in (w < -tol).nonzero()[0])
        raise CheckFailed(f"{name}: negative weight {w[idx].item():.3g} at {idx} [{describe}]")
    sums = w.sum(-1)
    worst = int((sums - 1).abs().argmax())
    expect(
        abs(sums[worst].item() - 1) <= tol * w.shape[-1] + tol,
        f"{name}: row {worst} sums to {sums[worst].item():.9g} over L, expected 1",
        describe,
    )


def _expect_in_hull(context, values, describe):
    """Each coordinate of the context lies between the smallest and largest value of that coordinate."""
    c, v = context.double(), values.double()
    expect(bool(torch.isfinite(c).all()), "context: non-finite entries", describe)
    tol = ATTENTION_SUMS.for_dtypes(torch.float64, context.dtype)
    lo, hi = v.min(1).values, v.max(1).values
    outside = (c < lo - (tol.atol + tol.rtol * lo.abs())) | (c > hi + (tol.atol + tol.rtol * hi.abs()))
    if outside.any():
        n, j = (int(i) for i in outside.nonzero()[0])
        raise CheckFailed(
            f"context[{n}, {j}] = {c[n, j].item():.6g} lies outside the values' range "
            f"[{lo[n, j].item():.6g}, {hi[n, j].item():.6g}] over the L locations: the context must "
            f"be a convex combination of the values [{describe}]"
        )


def _expected_coords(grid: int) -> torch.Tensor:
    """(L, 2) float64: (row, col) centres of a row-major grid, ((index + 0.5) / grid) * 2 - 1."""
    rows = [((loc // grid) + 0.5) / grid * 2 - 1 for loc in range(grid * grid)]
    cols = [((loc % grid) + 0.5) / grid * 2 - 1 for loc in range(grid * grid)]
    return torch.tensor([rows, cols], dtype=torch.float64).T


def _check_coords(student, features, grid, describe):
    out = student.call("attention.with_coords", features=features, grid=grid)
    result, after = expect_tuple("recipe result", out, 2, describe)
    n, L, D = features.shape
    expect_shaped("with_coords result", result, (n, L, D + 2), describe)
    expect(
        result.dtype == features.dtype,
        f"with_coords result: expected dtype {features.dtype} (the features'), got {result.dtype}",
        describe,
    )
    expect_tensor(
        "with_coords result[..., :D] (the features, unchanged)",
        result[..., :D],
        features,
        tolerance=EXACT,
        case=describe,
    )
    coords, expected = result[..., D:].double(), _expected_coords(grid).expand(n, L, 2)
    bad = ((coords - expected).abs() > COORDS.atol + COORDS.rtol * expected.abs()).any(-1)
    if bad.any():
        b, loc = (int(i) for i in bad.nonzero()[0])
        raise CheckFailed(
            f"with_coords: location {loc} (row {loc // grid}, column {loc % grid}) of batch item {b} "
            f"got (row, col) = ({coords[b, loc, 0].item():.6g}, {coords[b, loc, 1].item():.6g}), "
            f"expected ({expected[b, loc, 0].item():.6g}, {expected[b, loc, 1].item():.6g}); "
            f"{int(bad.sum())} of "
            f"{bad.numel()} locations wrong [{describe}]"
        )
    expect_tensor(
        "features after with_coords (with_coords must not modify its input)",
        after,
        features,
        tolerance=EXACT,
        case=describe,
    )
