"""Part 4 public checks: the attention step and its gradients against F.scaled_dot_product_attention and the
properties of its weights, the coordinate channels against their closed form, the soft-attention captioner against the reference
with the same injected weights (golden data). (The part's hidden checks and its training check run in
the grader, after the deadline; they are not in the handout.)

Expected values come from F.scaled_dot_product_attention (the context; with the identity as values, the
weights), closed forms, or, for the captioner, the reference model run in float64 on fixed cases by the
instructor's tooling and stored as golden data (autograder/public/golden/attention.pt); never from the student's
own output, except where the property itself compares two of its outputs (invariance to permuting locations).
In the grader's round the captioner's cases are drawn from its seed and scored by the reference there.
An attention case named "N, L, d, D, scale, seed=s" is query = tensor(s, N, d) * scale, keys =
tensor(s + 1, N, L, d) * scale, values = tensor(s + 2, N, L, D) with autograder.public.strategies.tensor (float64),
so a student can rebuild it from the message.

Accepted readings where the spec leaves a choice:
- float64 inputs may give float64 results, or float32 ones (a float32 accumulator somewhere) checked at
  float32 tolerance; float32 inputs must give float32 results.
- forward's logits are compared after a log-softmax: logits are defined up to a constant per row, so a
  forward that returns log-probabilities (say, by calling step) is as correct as one that returns raw scores.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from hypothesis import example, given

from autograder.public import golden
from autograder.public.checks import check, current_round
from autograder.public.compare import (
    CheckFailed,
    Tolerance,
    expect,
    expect_close,
    expect_shaped,
    expect_tensor,
    expect_tuple,
    type_name,
)
from autograder.public.strategies import FEW, attention_cases, captioner_sizes, coords_cases, tensor

# Tolerances |a - e| <= atol + rtol |e|, by the dtype the student's code returned. float64 results are held to
# (nearly) the last digits; float32 ones to what float32 rounding of scores up to ~30 allows.
TIGHT = dict(rtol=1e-9, atol=1e-10)
LOOSE = dict(rtol=1e-4, atol=1e-5)
CLOSE = Tolerance(**LOOSE, float64=Tolerance(**TIGHT))
# Gradients pass through the LSTM cell T-1 times: a little more room in float64.
TIGHT_GRAD = dict(rtol=1e-7, atol=1e-9)
LOOSE_GRAD = dict(rtol=1e-3, atol=1e-4)
GRAD = Tolerance(**LOOSE_GRAD, float64=Tolerance(**TIGHT_GRAD))
COORDS = dict(rtol=1e-6, atol=1e-6)  # cell centres in [-1, 1], computed in float32 or float64

GRID = 8  # the encoder's grid is 8 x 8

# Each property first tries one small but non-degenerate case (its @example): code that fails everywhere (an
# unimplemented stub, a wrong shape) fails there at once, with that case named, instead of after a hundred shrinking
# calls. Code that fails only on some cases is then found (and, in a public check, shrunk) by hypothesis.
PROBE_ATTENTION = (7, 2, 5, 3, 4, 1.0)  # seed, N, L, d, D, scale
PROBE_COORDS = (7, 2, 3, 2)  # seed, N, grid, D
PROBE_CAPTIONER = dict(seed=7, N=2, T=4, L=5, n_vocab=6, D=3, E=2, H=4, K=3)

# The captioner's public cases: the probe, then the corner sizes (one caption, one word, one location, one key
# dimension). Their weights and expected outputs are golden data; the grader's round draws cases of its own.
GOLDEN_SIZES = (
    PROBE_CAPTIONER,
    dict(seed=11, N=1, T=2, L=1, n_vocab=4, D=1, E=1, H=1, K=1),
    dict(seed=12, N=3, T=5, L=9, n_vocab=8, D=6, E=5, H=6, K=4),
    dict(seed=13, N=2, T=3, L=2, n_vocab=5, D=4, E=3, H=2, K=1),
    dict(seed=14, N=1, T=5, L=7, n_vocab=7, D=2, E=4, H=3, K=2),
    dict(seed=15, N=3, T=4, L=3, n_vocab=6, D=5, E=1, H=5, K=3),
)


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
            "context", context, _sdpa_context(q, k, v), CLOSE, inputs=torch.float64, case=describe, same_dtype=True
        )
        expect_close(
            "weights", weights, _sdpa_weights(q, k), CLOSE, inputs=torch.float64, case=describe, same_dtype=True
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
                f"d/d {name}", g if g is not None else torch.zeros_like(e), e, GRAD, inputs=torch.float64, case=describe
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


# -- the captioner ---------------------------------------------------------------------------------------


@check()
def forward_matches_the_reference_with_the_same_weights(student, ctx):
    """With the reference's weights, forward's logits and attention maps equal the reference's (float64)."""
    for_captioner_cases(lambda case: _check_forward(student, case))


@check()
def decoding_steps_reproduce_teacher_forcing(student, ctx):
    """step, fed the caption's words, returns the teacher-forced log-probabilities and leaves its input state alone."""
    for_captioner_cases(lambda case: _check_steps(student, case))


def for_captioner_cases(run) -> None:
    """run(case) on every captioner case of this round: the golden cases in the public round; in the grader's, cases
    drawn from its seed, built and scored with its reference (captioner_case)."""
    now = current_round()
    if now.public:
        for case in golden.load("attention", FINGERPRINT)["captioner"]:
            run(case)
        return

    @FEW
    @given(captioner_sizes())
    def graders(sizes):
        run(captioner_case(now.reference("attention"), sizes, torch.float64))

    graders()


def captioner_case(reference, sizes: dict, dtype: torch.dtype) -> dict:
    """One captioner case, built with `reference` (the module solutions.attention): the reference AttnCaptioner with
    seeded weights (queries and keys sharpened, so that attention maps are far from uniform) and inputs in `dtype`,
    and what the reference's forward returns for them in float64. Plain data: the golden files hold these."""
    config = {k: sizes[k] for k in ("n_vocab", "D", "E", "H", "K")}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(sizes["seed"])
        model = reference.AttnCaptioner(**config).to(dtype)
    with torch.no_grad():
        model.Wq.weight.mul_(3.0)
        model.Wk.weight.mul_(3.0)
    features, captions = _captioner_inputs(sizes, config, dtype)
    with torch.no_grad():
        logits, weights = copy.deepcopy(model).double()(features.double(), captions)
    return {
        "sizes": dict(sizes),
        "dtype": str(dtype).removeprefix("torch."),
        "state_dict": _state(model),
        "features": features,
        "captions": captions,
        "logits": logits,
        "weights": weights,
    }


def golden_cases(reference) -> dict[str, list]:
    """This part's golden data, computed with `reference` (python -m instructor golden)."""
    return {"captioner": [captioner_case(reference, sizes, torch.float64) for sizes in GOLDEN_SIZES]}


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
            f"{name} after attend (attend must not modify its inputs)", got, before, rtol=0, atol=0, case=describe
        )
    n, L, D = v.shape
    expect_shaped("context", context, (n, D), describe)
    expect_shaped("weights", weights, (n, L), describe)
    return context, weights


def _expect_distribution(name, weights, describe):
    w = weights.double()
    expect(bool(torch.isfinite(w).all()), f"{name}: non-finite entries", describe)
    tol = 1e-9 if weights.dtype == torch.float64 else 1e-5
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
    tol = 1e-9 if context.dtype == torch.float64 else 1e-5
    lo, hi = v.min(1).values, v.max(1).values
    outside = (c < lo - tol * (1 + lo.abs())) | (c > hi + tol * (1 + hi.abs()))
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
        rtol=0,
        atol=0,
        case=describe,
    )
    coords, expected = result[..., D:].double(), _expected_coords(grid).expand(n, L, 2)
    bad = ((coords - expected).abs() > COORDS["atol"] + COORDS["rtol"] * expected.abs()).any(-1)
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
        rtol=0,
        atol=0,
        case=describe,
    )


def _state(model) -> dict:
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


def _captioner_inputs(sizes: dict, config: dict, dtype: torch.dtype):
    n, T, L = sizes["N"], sizes["T"], sizes["L"]
    features = tensor(sizes["seed"] + 1, n, L, config["D"], dtype=dtype)
    g = torch.Generator().manual_seed(sizes["seed"] + 2)
    captions = torch.randint(0, config["n_vocab"], (n, T), generator=g)
    captions[:, 0] = 1  # START
    return features, captions


def _describe(case: dict) -> str:
    s = case["sizes"]
    return (
        f"AttnCaptioner(n_vocab={s['n_vocab']}, D={s['D']}, E={s['E']}, H={s['H']}, K={s['K']}) with the "
        f"reference's weights, N={s['N']}, T={s['T']}, L={s['L']}, torch.{case['dtype']}, seed={s['seed']}"
    )


def _config(case: dict) -> dict:
    return {k: case["sizes"][k] for k in ("n_vocab", "D", "E", "H", "K")}


def _check_forward(student, case: dict):
    """forward on one captioner case (captioner_case): logits up to a constant per row, the maps, inputs unchanged."""
    config, describe, dtype = _config(case), _describe(case), getattr(torch, case["dtype"])
    features, captions = case["features"], case["captions"]
    n, T, L, V = case["sizes"]["N"], case["sizes"]["T"], case["sizes"]["L"], config["n_vocab"]
    exp_logits, exp_weights = case["logits"], case["weights"]
    out = student.call(
        "attention.captioner_forward",
        config=config,
        state_dict=case["state_dict"],
        features=features,
        captions=captions,
    )
    result, (features_after, captions_after), step_returns = expect_tuple("recipe result", out, 3, describe)
    logits, weights = expect_tuple("forward result (logits, weights)", result, 2, describe, exact=True)
    others = [kind for kind in step_returns if kind != "tuple"]
    expect(
        not others,
        f"attention_step (called by forward): expected a tuple (context, weights), got {others[:1]}",
        describe,
    )
    expect_shaped("forward logits", logits, (n, T - 1, V), describe)
    expect_shaped("forward weights", weights, (n, T - 1, L), describe)
    allowed = (torch.float64, torch.float32) if dtype == torch.float64 else (dtype,)
    expect(logits.dtype in allowed, f"forward logits: expected dtype {dtype}, got {logits.dtype}", describe)
    tol = TIGHT if logits.dtype == torch.float64 else LOOSE
    expect_tensor(
        "log_softmax of forward logits (logits are compared up to a constant per row)",
        F.log_softmax(logits.double(), -1),
        F.log_softmax(exp_logits, -1),
        case=describe,
        **tol,
    )
    expect_close(
        "forward weights (attention maps)", weights, exp_weights, CLOSE, inputs=dtype, case=describe, same_dtype=True
    )
    expect_tensor("features after forward", features_after, features, rtol=0, atol=0, case=describe)
    expect_tensor("captions after forward", captions_after, captions, rtol=0, atol=0, case=describe)


def _check_steps(student, case: dict):
    """step fed the caption's words, on one captioner case: teacher forcing's log-probabilities, state unchanged."""
    config, describe, dtype = _config(case), _describe(case), getattr(torch, case["dtype"])
    features, captions, n = case["features"], case["captions"], case["sizes"]["N"]
    expected = F.log_softmax(case["logits"], -1)
    out = student.call(
        "attention.captioner_steps", config=config, state_dict=case["state_dict"], features=features, captions=captions
    )
    if isinstance(out, dict) and "step" in out:
        expect_tuple("step result (log_probs, state)", out["step"], 2, describe, exact=True)
    expect(
        isinstance(out, dict) and isinstance(out.get("log_probs"), list), "the recipe's result is malformed", describe
    )
    for t, log_probs in enumerate(out["log_probs"]):
        expect_close(
            f"log_probs of step {t} (fed captions[:, {t}])",
            log_probs,
            expected[:, t],
            CLOSE,
            inputs=dtype,
            case=describe,
            same_dtype=True,
        )
    for i, (before, after) in enumerate(zip(out["first_before"], out["first_after"])):
        expect_tensor(
            f"state[{i}] after the first step (step must not modify the state it is given)",
            after,
            before,
            rtol=0,
            atol=0,
            case=describe,
        )
    state = out["last_state"]
    expect(
        isinstance(state, tuple) and len(state) > 0 and all(isinstance(s, torch.Tensor) for s in state),
        f"the state step returns: expected a tuple of tensors, got {type_name(state)}",
        describe,
    )
    expect(
        all(s.dim() >= 1 and s.shape[0] == n for s in state),
        f"the state step returns: every tensor's first dimension must be the batch ({n}), got shapes "
        f"{[tuple(s.shape) for s in state]}",
        describe,
    )


FINGERPRINT = golden.fingerprint(GOLDEN_SIZES, captioner_case, _captioner_inputs, _state)
