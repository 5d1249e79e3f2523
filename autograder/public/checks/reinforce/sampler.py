"""Part 5 public checks, the location sampler: its distribution (binomial standard errors), its generator, and its
differentiable log-probability."""

from __future__ import annotations

import torch
from hypothesis import example, given

from autograder.public.checks import check, current_round
from autograder.public.compare import CheckFailed, expect, expect_tensor, expect_tuple, type_name
from autograder.public.strategies import (
    FEW,
    weight_cases,
)
from autograder.public.tolerances import (
    EXACT,
    LOCATION_LOG_PROB,
    LOCATION_LOG_PROB_GRAD,
)

Z = 5.0  # standard errors allowed for a Monte Carlo estimate: a correct sampler fails with p ~ 1e-6


# -- helpers --------------------------------------------------------------------------------------


def _distributions(seed: int, rows: int, L: int, scale: float, zeros: bool) -> torch.Tensor:
    """`rows` random distributions over L locations (float32, rows sum to 1), some entries exactly zero."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, L, generator=g, dtype=torch.float64) * scale
    if zeros and L > 1:
        drop = torch.rand(rows, L, generator=g) < 0.3
        drop[torch.arange(rows), logits.argmax(-1)] = False  # every row keeps at least one location
        logits = logits.masked_fill(drop, float("-inf"))
    return torch.softmax(logits, -1).float()


def _repeat(dists: torch.Tensor, n: int) -> torch.Tensor:
    """Interleave n copies of each distribution: batch row i uses distribution i % len(dists)."""
    return dists.repeat(n, 1)


def _sample(student, weights: torch.Tensor, seed: int, describe: str):
    """Run sample_location; check the type, shape, dtype and range of the index; return (index, log_prob) and
    the recipe's whole answer (gradient, indices from the same and from another generator state)."""
    out = student.call("reinforce.sample", weights=weights, generator_seed=seed, other_seed=seed + 1)
    index, log_prob = expect_tuple("sample_location result (index, log_prob)", out["result"], 2, describe, exact=True)
    n, L = weights.shape
    if not isinstance(index, torch.Tensor):
        raise CheckFailed(f"sample_location index: expected a tensor, got {type_name(index)} [{describe}]")
    expect(
        tuple(index.shape) == (n,), f"sample_location index: expected shape ({n},), got {tuple(index.shape)}", describe
    )
    expect(index.dtype == torch.long, f"sample_location index: expected dtype torch.int64, got {index.dtype}", describe)
    bad = (index < 0) | (index >= L)
    if bad.any():
        row = int(bad.nonzero()[0])
        raise CheckFailed(
            f"sample_location index: row {row} drew location {int(index[row])}, outside 0..{L - 1} [{describe}]"
        )
    return index, log_prob, out


def _check_frequencies(index: torch.Tensor, dists: torch.Tensor, describe: str) -> None:
    """Row i of the batch drew from dists[i % R]: each location's frequency within Z binomial standard errors."""
    R, L = dists.shape
    for r in range(R):
        drawn = index[r::R]
        n = drawn.numel()
        p = dists[r].double()
        freq = torch.bincount(drawn, minlength=L).double() / n
        tolerance = Z * torch.sqrt(p * (1 - p) / n) + 1e-3
        off = (freq - p).abs() - tolerance
        worst = int(off.argmax())
        expect(
            bool((off <= 0).all()),
            f"distribution {r} (batch rows {r}, {r + R}, {r + 2 * R}, ...): location {worst} drawn with frequency "
            f"{freq[worst]:.4f}, expected {p[worst]:.4f} +- {tolerance[worst]:.4f}; weights "
            f"{[round(x, 4) for x in p.tolist()]}",
            describe,
        )


def _grader_seed(offset: int = 0) -> int | None:
    """None in the public round; in the grader's round, a seed of its own (autograder.public.checks.Round)."""
    now = current_round()
    return None if now.public else (now.seed + offset) % 2**31


# -- public checks --------------------------------------------------------------------------------------


@check()
def sample_location_follows_the_weights(student, ctx):
    """sample_location draws each row's location with the probabilities in that row of the weights."""
    dists = torch.tensor(
        [[0.05, 0.1, 0.15, 0.2, 0.5, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.3, 0.02, 0.18, 0.15, 0.25, 0.1]]
    )
    seed = 5
    if (own := _grader_seed()) is not None:
        dists, seed = _distributions(own, 3, 6, 1.0, zeros=True), own
    n = 4000
    shown = [[round(x, 4) for x in row] for row in dists.tolist()]
    describe = f"weights (N={3 * n}, L=6): row i uses distribution i % 3 of {shown}, generator seed {seed}"
    index, _, _ = _sample(student, _repeat(dists, n), seed, describe)
    _check_frequencies(index, dists, describe)


@check()
def sample_location_is_reproducible(student, ctx):
    """The same generator state gives the same indices; another seed gives other indices."""
    seed = _grader_seed() or 7
    dists = _distributions(seed, 4, 6, 0.5, zeros=False)
    weights = _repeat(dists, 50)
    describe = f"weights (N=200, L=6), generator seeds {seed} and {seed + 1}"
    index, _, out = _sample(student, weights, seed, describe)
    expect_tensor(
        "sample_location index from the same generator state", out["again"], index, tolerance=EXACT, case=describe
    )
    other = out["other"]
    expect(
        isinstance(other, torch.Tensor) and not torch.equal(other, index),
        "sample_location drew the same 200 indices from generator seeds 7 and 8: draw from the generator you are given",
        describe,
    )


@check()
def sample_location_log_prob_is_differentiable(student, ctx):
    """log_prob = log(weights[index]) for the drawn index, with gradient 1 / weight at that index."""

    @FEW
    @given(weight_cases)
    @example((1, 2, 3, 1.0, False))
    def prop(case):
        seed, n, L, scale, zeros = case
        weights = _distributions(seed, n, L, scale, zeros)
        describe = f"seed={seed}, weights (N={n}, L={L}) = {[[round(x, 4) for x in r] for r in weights.tolist()]}"
        index, log_prob, out = _sample(student, weights, seed % 1000, describe)
        rows = torch.arange(n)
        picked = weights[rows, index].double()
        expect(
            bool((picked > 0).all()),
            f"sample_location drew location(s) of weight zero: indices {index.tolist()}",
            describe,
        )
        expect(
            isinstance(log_prob, torch.Tensor) and log_prob.is_floating_point(),
            f"sample_location log_prob: expected a floating-point tensor, got "
            f"{log_prob.dtype if isinstance(log_prob, torch.Tensor) else type_name(log_prob)}",
            describe,
        )
        expect_tensor(
            f"sample_location log_prob (indices drawn: {index.tolist()})",
            log_prob,
            picked.log(),
            tolerance=LOCATION_LOG_PROB,
            case=describe,
            check_dtype=False,
        )
        grad = out["grad"]
        expect(grad is not None, "sample_location log_prob carries no gradient with respect to weights", describe)
        if isinstance(grad, torch.Tensor) and grad.is_floating_point() and not bool(torch.isfinite(grad).all()):
            bad = sorted({tuple(i) for i in (~torch.isfinite(grad)).nonzero().tolist()})
            at_zero = all(weights[i].item() == 0 for i in bad)
            raise CheckFailed(
                f"d sum(log_prob) / d weights is not finite at {bad[:4]}"
                + (
                    " where the weight is exactly 0: locations that were not drawn must get a finite "
                    "gradient (0 along the simplex), whatever their weight; soft attention rarely gives "
                    "exact zeros, so training alone would not show this"
                    if at_zero
                    else ""
                )
                + f" [{describe}]"
            )
        expected = torch.zeros(n, L, dtype=torch.float64)
        expected[rows, index] = 1 / picked
        expect(
            isinstance(grad, torch.Tensor) and tuple(grad.shape) == (n, L),
            "d sum(log_prob) / d weights: unexpected shape",
            describe,
        )

        # Only the part of the gradient along the simplex matters: normalising the weights first (as
        # torch.distributions.Categorical does) adds the same number to every entry of a row. Compare without it.
        # Rows whose drawn location is certain (weight 1 in float32) are left out: no distribution on the simplex
        # can move there, and Categorical clamps such probabilities (zero gradient).
        def project(g):
            return g.double() - g.double().mean(-1, keepdim=True)

        uncertain = picked < 1 - 1e-6
        expect_tensor(
            f"d sum(log_prob) / d weights, up to a constant per row, rows whose drawn weight is below 1 "
            f"(indices drawn: {index.tolist()})",
            project(grad)[uncertain],
            project(expected)[uncertain],
            tolerance=LOCATION_LOG_PROB_GRAD,
            case=describe,
        )

    prop()
