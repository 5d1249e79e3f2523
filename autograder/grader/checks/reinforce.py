"""Part 5 hidden checks: the sampler on every row, the baseline's effect on
the estimator's mean and variance, per-step baselines without a gradient, and inputs left alone. (The public
checks and the helpers both use: autograder/public/checks/reinforce/.)"""

from __future__ import annotations

import torch
from hypothesis import example, given

from autograder.grader.strategies import (
    estimator_baselines,
    estimator_locations,
    reward_offsets,
    sampler_distribution_counts,
    sampler_locations,
    sampler_logit_scales,
    update_baselines,
    update_batch_sizes,
    update_momenta,
    update_steps,
)
from autograder.public.checks import check
from autograder.public.checks.reinforce import (
    N_ESTIMATE,
    _check_frequencies,
    _check_unbiased,
    _check_update,
    _distributions,
    _estimates,
    _exact,
    _repeat,
    _sample,
)
from autograder.public.compare import expect, expect_tensor, expect_tuple, type_name
from autograder.public.strategies import FEW, PROPERTY, seeds
from autograder.public.strategies import tensor as normal
from autograder.public.tolerances import EXACT


@check()
def sample_location_follows_every_row(student, ctx):
    """sample_location follows each row's distribution for random weights, zeros and near-one-hot rows included."""

    @FEW
    @given(seeds, sampler_distribution_counts, sampler_locations, sampler_logit_scales)
    @example(1, 2, 3, 1.0)
    def prop(seed, R, L, scale):
        dists = _distributions(seed, R, L, scale, zeros=True)
        describe = f"seed={seed}, {R} distributions over L={L} locations, 2000 rows each"
        index, _, _ = _sample(student, _repeat(dists, 2000), seed % 1000, describe)
        _check_frequencies(index, dists, describe)

    prop()


@check()
def reinforce_baseline_keeps_the_mean_and_cuts_the_variance(student, ctx):
    """On random problems the estimate is unbiased with and without a baseline, and the baseline cuts the variance."""

    @FEW
    @given(seeds, estimator_locations, reward_offsets, estimator_baselines)
    @example(1, 3, -8.0, "float")
    def prop(seed, L, offset, kind):
        theta = normal(seed, L, dtype=torch.float32)
        f = normal(seed + 1, L, dtype=torch.float32) + offset
        p = torch.softmax(theta.double(), 0)
        if kind == "optimal":  # b* by enumeration: E[f ||g||^2] / E[||g||^2], g = onehot(s) - p
            g2 = ((torch.eye(L, dtype=torch.float64) - p) ** 2).sum(1)
            b = ((p * f.double() * g2).sum() / (p * g2).sum()).item()
        else:
            b = (p * f.double()).sum().item()
        baseline = torch.tensor(b, dtype=torch.float32) if kind == "0-d tensor" else b
        describe = f"seed={seed}, L={L}, reward offset {offset}, baseline {kind} = {b:.3f}, {N_ESTIMATE} samples"
        (raw, based), _ = _estimates(student, theta, f, [0.0, baseline], seed % 1000, describe)
        var0, varb = _exact(theta, f, 0.0)[1], _exact(theta, f, b)[1]
        _check_unbiased("no baseline", raw, theta, f, 0.0, describe)
        _check_unbiased(f"baseline {b:.3f}", based, theta, f, b, describe)
        ratio = varb.sum().item() / var0.sum().item()  # exact, by enumeration
        got = based.var(0).sum().item() / raw.var(0).sum().item()
        expect(
            got <= 2 * ratio + 0.02,
            f"per-sample gradient variance with the baseline is {got:.3f} of the variance "
            f"without; the exact ratio is {ratio:.3f}",
            describe,
        )

    prop()


@check()
def update_baseline_gives_detached_per_step_means(student, ctx):
    """update_baseline follows the moving-average formula per step and returns a tensor with no gradient."""

    @PROPERTY
    @given(seeds, update_batch_sizes, update_steps, update_baselines, update_momenta)
    @example(1, 2, 3, "tensor", 0.9)
    def prop(seed, N, T, kind, momentum):
        shape = (N,) if T is None else (N, T)
        rewards = normal(seed, *shape, dtype=torch.float32) - 2
        baseline = {"none": None, "float": -1.5, "tensor": normal(seed + 1, 1, *shape[1:], dtype=torch.float32)[0] - 2}[
            kind
        ]
        describe = (
            f"seed={seed}, rewards {shape}, baseline {kind}, momentum "
            f"{'default (0.9)' if momentum is None else momentum}"
        )
        _check_update(student, baseline, rewards, momentum, describe, detached=True)

    prop()


@check()
def functions_leave_their_inputs_unchanged(student, ctx):
    """sample_location, reinforce_loss, optimal_baseline and update_baseline do not modify their inputs."""
    weights = _distributions(41, 5, 6, 1.0, zeros=True)
    log_probs = -normal(42, 5, 4, dtype=torch.float32).abs()
    rewards = normal(43, 5, 4, dtype=torch.float32) - 3
    baseline = normal(44, 4, dtype=torch.float32) - 3
    mask = torch.ones(5, 4)
    mask[0, 3] = 0
    norms = normal(45, 5, dtype=torch.float32).abs() + 0.1
    out = student.call(
        "reinforce.inputs_unchanged",
        weights=weights,
        log_probs=log_probs,
        rewards=rewards,
        baseline=baseline,
        mask=mask,
        score_norms_sq=norms,
    )
    sent = {
        "sample_location": {"weights": weights},
        "reinforce_loss": {"log_probs": log_probs, "rewards": rewards, "baseline": baseline, "mask": mask},
        "optimal_baseline": {"rewards": rewards[:, 0], "score_norms_sq": norms},
        "update_baseline": {"baseline": baseline, "rewards": rewards},
    }
    calls = {
        "sample_location": "sample_location(weights (5, 6), generator)",
        "reinforce_loss": "reinforce_loss(log_probs (5, 4), rewards (5, 4), baseline (4,), mask (5, 4))",
        "optimal_baseline": "optimal_baseline(rewards (5,), score_norms_sq (5,))",
        "update_baseline": "update_baseline(baseline (4,), rewards (5, 4), momentum=0.9)",
    }
    expect(isinstance(out, dict), f"inputs_unchanged: unexpected result {type_name(out)}")
    for fn, tensors in sent.items():
        for name, before in tensors.items():
            expect_tensor(f"{fn}: input {name} after the call", out[fn][name], before, tolerance=EXACT, case=calls[fn])
    # Inputs left alone by functions that compute nothing mean nothing: each must depend on what it is given.
    _expect_functions_depend_on_their_inputs(student, log_probs, rewards, baseline, mask, norms)


def _as_float_tensor(got, what: str, describe: str) -> torch.Tensor:
    """A float or a floating-point tensor as a float64 tensor (their types are the other checks' to judge)."""
    if isinstance(got, float):
        return torch.tensor(got, dtype=torch.float64)
    expect(
        isinstance(got, torch.Tensor) and got.is_floating_point(),
        f"{what}: expected a float or a floating-point tensor, got {type_name(got)}",
        describe,
    )
    return got.detach().double()


def _expect_functions_depend_on_their_inputs(student, log_probs, rewards, baseline, mask, norms) -> None:
    """sample_location draws a location of weight 1; reinforce_loss, optimal_baseline and update_baseline move when
    every reward rises by 1 (by -mean(log_probs), 1 and 0.1 in closed form)."""
    describe = "the anchor of inputs left unchanged: weights one-hot at locations [2, 0, 5], generator seed 3"
    hot = torch.zeros(3, 6)
    hot[[0, 1, 2], [2, 0, 5]] = 1.0
    index, _ = expect_tuple(
        "sample_location result (index, log_prob)",
        student.call("reinforce.sample", weights=hot, generator_seed=3, other_seed=4)["result"],
        2,
        describe,
        exact=True,
    )
    expect(
        isinstance(index, torch.Tensor) and index.tolist() == [2, 0, 5],
        f"your sample_location does not "
        f"follow its weights: it drew {index.tolist() if isinstance(index, torch.Tensor) else index!r} where every "
        f"row puts all its weight on one location (expected [2, 0, 5])",
        describe,
    )
    raised = rewards + 1
    for what, call in (
        (
            "reinforce_loss",
            lambda r: student.call("reinforce.loss", log_probs=log_probs, rewards=r, baseline=baseline, mask=mask)[
                "loss"
            ],
        ),
        ("optimal_baseline", lambda r: student.call("reinforce.optimal", rewards=r[:, 0], score_norms_sq=norms)),
        (
            "update_baseline",
            lambda r: student.call("reinforce.update", baseline=baseline, rewards=r, momentum=0.9)["value"],
        ),
    ):
        case = f"the anchor of inputs left unchanged: {what} with the rewards, then with every reward + 1"
        moved = float(
            (_as_float_tensor(call(raised), what, case) - _as_float_tensor(call(rewards), what, case)).abs().max()
        )
        expect(
            moved > 1e-3,
            f"your {what} does not depend on the rewards: it moves by at most {moved:.3g} when every reward rises by 1",
            case,
        )
