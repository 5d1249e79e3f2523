"""Part 5 public checks, the REINFORCE loss and its estimator: reinforce_loss against its formula (rewards and
baseline constants), the score-function estimator against the exact gradient by enumeration (the lecture's Section
5.1), and the baselines against their closed forms."""

from __future__ import annotations

import torch
from hypothesis import example, given

from autograder.public.checks import check
from autograder.public.checks.reinforce.sampler import Z, _grader_seed
from autograder.public.compare import CheckFailed, expect, expect_tensor, type_name
from autograder.public.strategies import (
    FEW,
    PROPERTY,
    baseline_sample_counts,
    constant_baselines,
    formula_baselines,
    loss_shapes,
    mask_flags,
    seeds,
    wide_loss_shapes,
)
from autograder.public.strategies import tensor as normal
from autograder.public.tolerances import (
    BASELINE_UPDATE,
    OPTIMAL_BASELINE,
    REINFORCE_LOSS,
    REINFORCE_LOSS_GRAD,
)

N_ESTIMATE = 20000  # samples per score-function estimate, as in the lecture


def _exact(theta: torch.Tensor, f: torch.Tensor, b: float):
    """By enumeration of the L locations: the exact gradient of E_{s ~ softmax(theta)}[f(s)] and, for the
    per-sample estimate (f(s) - b) (onehot(s) - p), its variance per coordinate."""
    p = torch.softmax(theta.double(), 0)
    f = f.double()
    exact = p * (f - (p * f).sum())
    per_outcome = (f - b).unsqueeze(1) * (torch.eye(len(p), dtype=torch.float64) - p)  # row s: estimate if s drawn
    variance = (p.unsqueeze(1) * per_outcome**2).sum(0) - exact**2
    return exact, variance


def _estimates(student, theta, f, baselines, seed, describe):
    """Per-sample score-function estimates (N_ESTIMATE, L) from the student's functions, one per baseline."""
    out = student.call(
        "reinforce.estimator", theta=theta, rewards=f, baselines=baselines, n=N_ESTIMATE, generator_seed=seed
    )
    results = []
    for b, est in zip(baselines, out["estimates"]):
        b_value = float(b)
        expect(
            est is not None,
            f"reinforce_loss(log_prob from sample_location, rewards, baseline={b_value:.3f}) "
            f"carries no gradient to the attention logits: log_prob must stay differentiable",
            describe,
        )
        expect(
            isinstance(est, torch.Tensor) and tuple(est.shape) == (N_ESTIMATE, len(theta)),
            f"d reinforce_loss / d logits: expected shape {(N_ESTIMATE, len(theta))}",
            describe,
        )
        results.append(est.double())
    return results, out["indices"]


def _total_variance(theta: torch.Tensor, f: torch.Tensor, b: float) -> tuple[float, float]:
    """By enumeration: the total variance (summed over the L logits) of the per-sample estimate with baseline b,
    and the standard deviation of one sample's squared distance from the exact gradient, whose mean that variance
    is (so an observed total variance over n samples has standard error spread / sqrt(n))."""
    p = torch.softmax(theta.double(), 0)
    exact, _ = _exact(theta, f, b)
    per_outcome = (f.double() - b).unsqueeze(1) * (torch.eye(len(p), dtype=torch.float64) - p)
    squared = ((per_outcome - exact) ** 2).sum(1)
    total = (p * squared).sum()
    return total.item(), ((p * squared**2).sum() - total**2).clamp(min=0).sqrt().item()


def _check_unbiased(name: str, est: torch.Tensor, theta: torch.Tensor, f: torch.Tensor, b: float, describe: str):
    """The mean of the per-sample estimates is within Z standard errors (closed form, baseline b) of the exact
    gradient. A mean outside them is reported as the lecture tells the two causes apart: estimates that average
    to the exact gradient within their own standard errors, with a variance above the closed form's for this
    baseline, are an unbiased but noisier estimator (a baseline ignored or added); anything else is a bias."""
    exact, variance = _exact(theta, f, b)
    n = est.shape[0]
    mean = est.mean(0)
    tolerance = Z * torch.sqrt(variance.clamp(min=0) / n) + 1e-4 + 1e-3 * exact.abs()
    off = (mean - exact).abs() - tolerance
    finite = bool(torch.isfinite(est).all())
    if finite and bool((off <= 0).all()):
        return
    if finite:
        observed = est.var(0)
        within_own = (mean - exact).abs() <= Z * torch.sqrt(observed / n) + 1e-4 + 1e-3 * exact.abs()
        expected_total, spread = _total_variance(theta, f, b)
        if bool(within_own.all()) and observed.sum().item() > expected_total + Z * spread / n**0.5:
            without = _total_variance(theta, f, 0.0)[0]
            raise CheckFailed(
                f"{name}: higher variance, not bias: the {n} score-function estimates average to the exact gradient "
                f"within their own standard errors, but their variance (summed over the logits) is "
                f"{observed.sum().item():.3f} where the estimator with this baseline has {expected_total:.3f}"
                + (f" (and with no baseline at all {without:.3f})" if b != 0 else "")
                + "; a baseline leaves the mean unchanged whatever its value, and only subtracting b = E[f] "
                f"cuts the variance [{describe}]"
            )
    j = int(off.argmax())
    expect(
        finite and bool((off <= 0).all()),
        f"{name}: biased: the mean of {n} score-function estimates differs from the exact gradient (by "
        f"enumeration) at logit {j}: got {mean[j]:.4f}, expected {exact[j]:.4f} +- {tolerance[j]:.4f} ({Z:g} "
        f"standard errors); whole mean {[round(x, 4) for x in mean.tolist()]}, exact "
        f"{[round(x, 4) for x in exact.tolist()]}",
        describe,
    )


def _six_locations(seed: int = 0):
    """The lecture's toy problem (seed 0): logits over 6 locations, rewards with a large shared offset
    (log-likelihoods)."""
    g = torch.Generator().manual_seed(seed)
    theta = torch.randn(6, generator=g)
    f = torch.randn(6, generator=g) * 2 - 8
    return theta, f


def _loss_case(seed: int, shape: tuple, baseline_kind: str, masked: bool):
    """log_probs (<= 0), rewards with an offset, a baseline of the given kind and a 0/1 mask (at least one 1)."""
    log_probs = -normal(seed, *shape, dtype=torch.float32).abs() * 2
    rewards = normal(seed + 1, *shape, dtype=torch.float32) * 2 - 3
    b = normal(seed + 2, *shape, dtype=torch.float32) - 3
    first = b.reshape(-1)[0].clone()
    baseline = {
        "default": None,
        "float": round(float(first), 3),
        "zero": 0.0,
        "0-d tensor": first,
        "per step": b[0].clone() if len(shape) == 2 else first,
        "full": b,
    }[baseline_kind]
    mask = None
    if masked:
        g = torch.Generator().manual_seed(seed + 3)
        mask = (torch.rand(*shape, generator=g) < 0.7).float()
        mask.reshape(-1)[0] = 1.0
    return log_probs, rewards, baseline, mask


def _expected_loss(log_probs, rewards, baseline, mask):
    """The formula in float64: -sum(mask (rewards - baseline) log_probs) / sum(mask), and its gradient."""
    b = 0.0 if baseline is None else (baseline.double() if isinstance(baseline, torch.Tensor) else baseline)
    m = torch.ones_like(log_probs, dtype=torch.float64) if mask is None else mask.double()
    advantage = rewards.double() - b
    loss = -(m * advantage * log_probs.double()).sum() / m.sum()
    return loss, -(m * advantage) / m.sum()


def _check_loss(student, case, describe, constants: bool):
    log_probs, rewards, baseline, mask = case
    out = student.call("reinforce.loss", log_probs=log_probs, rewards=rewards, baseline=baseline, mask=mask)
    loss, grad = _expected_loss(*case)
    got = out["loss"]
    if isinstance(got, torch.Tensor) and not got.is_floating_point():
        raise CheckFailed(
            f"reinforce_loss: expected a floating-point scalar tensor, got dtype {got.dtype} [{describe}]"
        )
    expect_tensor("reinforce_loss value", got, loss, tolerance=REINFORCE_LOSS, case=describe, check_dtype=False)
    g = out["grad_log_probs"]
    expect(g is not None, "reinforce_loss: no gradient flows into log_probs", describe)
    expect_tensor(
        "d reinforce_loss / d log_probs", g, grad, tolerance=REINFORCE_LOSS_GRAD, case=describe, check_dtype=False
    )
    if constants:
        for name in ("rewards", "baseline"):
            gr = out[f"grad_{name}"]
            if isinstance(gr, torch.Tensor) and gr.abs().max() > 0:
                raise CheckFailed(
                    f"reinforce_loss: a gradient flows into {name} (largest {gr.abs().max():.3g}); "
                    f"{name} must be treated as constants (detach them) [{describe}]"
                )


def _describe_loss(seed, shape, baseline_kind, masked):
    return (
        f"seed={seed}, log_probs and rewards of shape {shape}, baseline {baseline_kind}, "
        f"mask {'0/1' if masked else 'None'}"
    )


def _check_update(student, baseline, rewards, momentum, describe, detached: bool):
    out = student.call("reinforce.update", baseline=baseline, rewards=rewards, momentum=momentum)
    mean = rewards.double().mean(0)
    if baseline is None:
        expected = mean
    else:
        m = 0.9 if momentum is None else momentum
        b = baseline.double() if isinstance(baseline, torch.Tensor) else baseline
        expected = m * b + (1 - m) * mean
        if not isinstance(expected, torch.Tensor):
            expected = torch.tensor(expected, dtype=torch.float64)
    expected = expected.expand(rewards.shape[1:])
    expect_tensor(
        "update_baseline result",
        out["value"],
        expected.contiguous(),
        tolerance=BASELINE_UPDATE,
        case=describe,
        check_dtype=False,
    )
    if detached:
        expect(
            not out["requires_grad"],
            "update_baseline: the result carries a gradient from rewards; "
            "return a tensor with no gradient (detach the rewards)",
            describe,
        )


@check()
def reinforce_loss_matches_the_formula(student, ctx):
    """reinforce_loss = -sum(mask (rewards - baseline) log_probs) / sum(mask), value and gradient."""

    @PROPERTY
    @given(seeds, loss_shapes, formula_baselines, mask_flags)
    @example(1, (3,), "float", True)
    def prop(seed, shape, baseline_kind, masked):
        case = _loss_case(seed, shape, baseline_kind, masked)
        _check_loss(student, case, _describe_loss(seed, shape, baseline_kind, masked), constants=False)

    prop()


@check()
def reinforce_loss_treats_rewards_and_baseline_as_constants(student, ctx):
    """reinforce_loss passes no gradient to rewards or baseline, and broadcasts a per-step baseline."""

    @PROPERTY
    @given(seeds, wide_loss_shapes, constant_baselines, mask_flags)
    @example(1, (2, 3), "per step", True)
    def prop(seed, shape, baseline_kind, masked):
        case = _loss_case(seed, shape, baseline_kind, masked)
        _check_loss(student, case, _describe_loss(seed, shape, baseline_kind, masked), constants=True)

    prop()


@check()
def reinforce_is_unbiased_on_six_locations(student, ctx):
    """REINFORCE built from sample_location + reinforce_loss is unbiased on 6 locations; b = E[f] cuts the variance."""
    theta, f = _six_locations(_grader_seed() or 0)
    p = torch.softmax(theta.double(), 0)
    b_mean = round((p * f.double()).sum().item(), 6)
    describe = (
        f"the lecture's problem: theta = {[round(x, 3) for x in theta.tolist()]}, rewards f = "
        f"{[round(x, 3) for x in f.tolist()]}, {N_ESTIMATE} samples, generator seed 0, per-sample estimate "
        f"-{N_ESTIMATE} x d reinforce_loss / d theta_i"
    )
    (raw, based), _ = _estimates(student, theta, f, [0.0, b_mean], _grader_seed(1) or 0, describe)
    for name, est, b in (("no baseline", raw, 0.0), (f"baseline b = E[f] = {b_mean:.3f}", based, b_mean)):
        _check_unbiased(name, est, theta, f, b, describe)
    v_raw, v_based = raw.var(0).sum().item(), based.var(0).sum().item()
    expect(
        v_based < 0.2 * v_raw,
        f"per-sample gradient variance {v_based:.3f} with b = E[f] against {v_raw:.3f} "
        f"without a baseline: the baseline should cut it by far more than 5x",
        describe,
    )


@check()
def optimal_baseline_matches_the_closed_form(student, ctx):
    """optimal_baseline returns b* = mean(f ||g||^2) / mean(||g||^2) as a number."""

    @FEW
    @given(seeds, baseline_sample_counts)
    @example(1, 3)
    def prop(seed, S):
        rewards = normal(seed, S, dtype=torch.float32) * 2 - 8
        norms = normal(seed + 1, S, dtype=torch.float32).abs() + 0.05
        describe = f"seed={seed}, S={S}, rewards {[round(x, 3) for x in rewards.tolist()[:6]]}{'...' if S > 6 else ''}"
        got = student.call("reinforce.optimal", rewards=rewards, score_norms_sq=norms)
        expected = (rewards.double() * norms.double()).mean() / norms.double().mean()
        if not isinstance(got, float):  # the docstring's "a Python float": a one-element tensor is not one
            raise CheckFailed(
                f"optimal_baseline: expected a Python float, got {type_name(got)}"
                + (
                    f" of shape {tuple(got.shape)} (.item() gives its float)"
                    if isinstance(got, torch.Tensor) and got.numel() == 1
                    else ""
                )
                + f" [{describe}]"
            )
        got = torch.tensor(got, dtype=torch.float64)
        expect_tensor("optimal_baseline", got, expected, tolerance=OPTIMAL_BASELINE, case=describe)

    prop()


@check()
def update_baseline_is_a_moving_average(student, ctx):
    """update_baseline: the first call returns the batch mean, then momentum * b + (1 - momentum) * mean."""
    r1 = torch.tensor([1.0, 2.0, 6.0, -1.0])
    r2 = torch.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 0.0], [-1.0, 3.0, 0.5]])
    if (own := _grader_seed()) is not None:  # the grader's own rewards, in the same shapes
        r1, r2 = normal(own, 4, dtype=torch.float32) * 3, normal(own + 1, 3, 3, dtype=torch.float32) * 3
    cases = [
        (None, r1, None, "first call (baseline None), rewards (4,) = [1, 2, 6, -1]"),
        (None, r2, None, "first call (baseline None), rewards (3, 3): one mean per step (column)"),
        (torch.tensor(2.0), r1, None, "baseline 2.0 (0-d tensor), rewards (4,), default momentum 0.9"),
        (1.0, r1, 0.5, "baseline 1.0 (float), rewards (4,), momentum 0.5"),
        (torch.tensor([1.0, -2.0, 4.0]), r2, 0.8, "baseline [1, -2, 4], rewards (3, 3), momentum 0.8"),
    ]
    for baseline, rewards, momentum, describe in cases:
        _check_update(student, baseline, rewards, momentum, describe, detached=False)
