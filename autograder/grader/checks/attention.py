"""Part 4 checks: the attention step against F.scaled_dot_product_attention and the properties of its
weights, the coordinate channels against their closed form, the soft-attention captioner against the
reference with the same injected weights. (Its training check: autograder/grader/training.py.)

Expected values come from F.scaled_dot_product_attention (the context; with the identity as values, the
weights), closed forms, or the reference model run here in float64; never from the student's own output,
except where the property itself compares two of its outputs (invariance to permuting locations).
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
from hypothesis import strategies as st

from autograder.public.checks import check
from autograder.public.compare import (CheckFailed, Tolerance, expect, expect_close, expect_shaped, expect_tensor,
                                       expect_tuple, type_name)
from autograder.public.strategies import FEW, PROPERTY, attention_cases, captioner_sizes, coords_cases, seeds, tensor
from solutions import attention as reference

# Tolerances |a - e| <= atol + rtol |e|, by the dtype the student's code returned. float64 results are held to
# (nearly) the last digits; float32 ones to what float32 rounding of scores up to ~30 allows.
TIGHT = dict(rtol=1e-9, atol=1e-10)
LOOSE = dict(rtol=1e-4, atol=1e-5)
CLOSE = Tolerance(**LOOSE, float64=Tolerance(**TIGHT))
# Gradients pass through the LSTM cell T-1 times: a little more room in float64.
TIGHT_GRAD = dict(rtol=1e-7, atol=1e-9)
LOOSE_GRAD = dict(rtol=1e-3, atol=1e-4)
COORDS = dict(rtol=1e-6, atol=1e-6)   # cell centres in [-1, 1], computed in float32 or float64

GRID = 8   # the encoder's grid is 8 x 8

# Each property first tries one small but non-degenerate case (its @example): code that fails everywhere (an
# unimplemented stub, a wrong shape) fails there at once, with that case named, instead of after a hundred shrinking
# calls. Code that fails only on some cases is then found (and, in a public check, shrunk) by hypothesis.
PROBE_ATTENTION = (7, 2, 5, 3, 4, 1.0)                      # seed, N, L, d, D, scale
PROBE_COORDS = (7, 2, 3, 2)                                 # seed, N, grid, D
PROBE_CAPTIONER = dict(seed=7, N=2, T=4, L=5, n_vocab=6, D=3, E=2, H=4, K=3)


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
        expect_close("context", context, _sdpa_context(q, k, v), CLOSE, inputs=torch.float64,
                     case=describe, same_dtype=True)
        expect_close("weights", weights, _sdpa_weights(q, k), CLOSE, inputs=torch.float64,
                     case=describe, same_dtype=True)
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


@check()
def uniform_weights_give_the_mean_of_the_values(student, ctx):
    """With equal keys or a zero query, attend's weights are uniform and the context is the mean of the values."""
    @PROPERTY
    @given(attention_cases, st.sampled_from(["equal keys", "zero query"]))
    @example(PROBE_ATTENTION, "equal keys")
    def prop(case, how):
        q, k, v, describe = _attention_inputs(case)
        n, L = k.shape[:2]
        if how == "equal keys":
            k = k[:, :1].repeat(1, L, 1)
        else:
            q = torch.zeros_like(q)
        describe += f", {how}"
        context, weights = _attend(student, q, k, v, describe)
        uniform = torch.full((n, L), 1.0 / L, dtype=torch.float64)
        expect_close("weights", weights, uniform, CLOSE, inputs=torch.float64, case=describe, same_dtype=True)
        expect_close("context", context, v.mean(1), CLOSE, inputs=torch.float64, case=describe, same_dtype=True)
    prop()


@check()
def attend_is_invariant_to_permuting_locations(student, ctx):
    """Permuting the locations (keys and values together) permutes the weights and leaves the context unchanged."""
    @PROPERTY
    @given(attention_cases, seeds)
    @example(PROBE_ATTENTION, 1)
    def prop(case, perm_seed):
        q, k, v, describe = _attention_inputs(case)
        L = k.shape[1]
        perm = torch.randperm(L, generator=torch.Generator().manual_seed(perm_seed))
        describe += f", permutation {perm.tolist()}"
        context, weights = _attend(student, q, k, v, describe)
        context_p, weights_p = _attend(student, q, k[:, perm], v[:, perm], describe)
        expect_close("context of the permuted locations", context_p, context.double(), CLOSE, inputs=context.dtype,
                     case=describe, same_dtype=True)
        expect_close("weights of the permuted locations", weights_p, weights.double()[:, perm],
                     CLOSE, inputs=weights.dtype, case=describe, same_dtype=True)
    prop()


@check()
def attend_matches_sdpa_at_model_size_in_float32(student, ctx):
    """On float32 inputs of the model's sizes (L = 64, d = 32, D = 50) attend matches SDPA and returns float32."""
    for seed in (401, 402, 403):
        n = 16
        q, k, v = (tensor(seed, n, 32, dtype=torch.float32), tensor(seed + 1, n, 64, 32, dtype=torch.float32),
                   tensor(seed + 2, n, 64, 50, dtype=torch.float32))
        describe = f"N={n}, L=64, d=32, D=50, float32, seed={seed}"
        context, weights = _attend(student, q, k, v, describe)
        q64, k64, v64 = q.double(), k.double(), v.double()
        expect_close("context", context, _sdpa_context(q64, k64, v64), CLOSE, inputs=torch.float32,
                     case=describe, same_dtype=True)
        expect_close("weights", weights, _sdpa_weights(q64, k64), CLOSE, inputs=torch.float32,
                     case=describe, same_dtype=True)


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


@check()
def with_coords_keeps_dtype_and_features_on_larger_grids(student, ctx):
    """with_coords keeps the features' dtype (float64 too) and values, for grids up to 16."""
    @PROPERTY
    @given(coords_cases, st.integers(1, 16), st.sampled_from([torch.float64, torch.float32]))
    @example(PROBE_COORDS, 3, torch.float64)
    def prop(case, grid, dtype):
        seed, n, _, D = case
        features = tensor(seed, n, grid * grid, D, dtype=dtype)
        _check_coords(student, features, grid, f"N={n}, grid={grid}, D={D}, {dtype}, seed={seed}")
    prop()
    _check_coords(student, tensor(8, 4, 64, 48, dtype=torch.float32), GRID, "N=4, grid=8, D=48 (the encoder's grid)")


# -- the captioner ---------------------------------------------------------------------------------------

@check()
def forward_matches_the_reference_with_the_same_weights(student, ctx):
    """With the reference's weights, forward's logits and attention maps equal the reference's (float64)."""
    @FEW
    @given(captioner_sizes())
    @example(PROBE_CAPTIONER)
    def prop(sizes):
        _check_forward(student, sizes, torch.float64)
    prop()


@check()
def decoding_steps_reproduce_teacher_forcing(student, ctx):
    """step, fed the caption's words, returns the teacher-forced log-probabilities and leaves its input state alone."""
    @FEW
    @given(captioner_sizes())
    @example(PROBE_CAPTIONER)
    def prop(sizes):
        _check_steps(student, sizes, torch.float64)
    prop()


@check()
def attention_step_attends_from_the_previous_hidden_state(student, ctx):
    """attention_step returns attend(Wq(h), keys, features): a distribution over L and its expected annotation."""
    @PROPERTY
    @given(captioner_sizes())
    @example(PROBE_CAPTIONER)
    def prop(sizes):
        model, config, describe = _reference_model(sizes, torch.float64)
        n, L = sizes["N"], sizes["L"]
        h, c = tensor(sizes["seed"] + 3, n, config["H"]), tensor(sizes["seed"] + 4, n, config["H"])
        features = tensor(sizes["seed"] + 5, n, L, config["D"])
        with torch.no_grad():
            state = (h, c, features, model.Wk(features))
            expected_context, expected_weights = model.attention_step(state)
        out = student.call("attention.captioner_attention_step", config=config, state_dict=_state(model),
                           h=h, c=c, features=features)
        result, state_after = expect_tuple("recipe result", out, 2, describe)
        context, weights = expect_tuple("attention_step result (context, weights)", result, 2, describe)
        expect_close("attention_step weights", weights, expected_weights, CLOSE, inputs=torch.float64,
                     case=describe, same_dtype=True)
        _expect_distribution("attention_step weights", weights, describe)
        expect_close("attention_step context", context, expected_context, CLOSE, inputs=torch.float64,
                     case=describe, same_dtype=True)
        for name, before, after in zip(("h", "c", "features", "keys"), state, state_after):
            expect_tensor(f"state {name} after attention_step", after, before, rtol=0, atol=0, case=describe)
    prop()


@check()
def forward_gradients_match_the_reference(student, ctx):
    """forward is differentiable: the gradients of the logits and maps reach every parameter as the reference's do."""
    @PROPERTY
    @given(captioner_sizes())
    @example(PROBE_CAPTIONER)
    def prop(sizes):
        model, config, describe = _reference_model(sizes, torch.float64)
        features, captions = _captioner_inputs(sizes, config, torch.float64)
        n, T, L, V = sizes["N"], sizes["T"], sizes["L"], config["n_vocab"]
        logit_weights = tensor(sizes["seed"] + 6, n, T - 1, V)
        map_weights = tensor(sizes["seed"] + 7, n, T - 1, L)
        logits, weights = model(features, captions)
        ((F.log_softmax(logits, -1) * logit_weights).sum() + (weights * map_weights).sum()).backward()
        out = student.call("attention.captioner_gradients", config=config, state_dict=_state(model),
                           features=features, captions=captions, logit_weights=logit_weights,
                           map_weights=map_weights)
        if isinstance(out, dict) and "forward" in out:
            got = out["forward"]
            logits_s, weights_s = expect_tuple("forward result (logits, weights)", got, 2, describe)
            expect_shaped("forward logits", logits_s, (n, T - 1, V), describe)
            expect_shaped("forward weights", weights_s, (n, T - 1, L), describe)
        expect(isinstance(out, dict) and isinstance(out.get("gradients"), dict),
               f"expected the gradients of the model's parameters, got {type_name(out)}", describe)
        grads = out["gradients"]
        tol = TIGHT_GRAD if out.get("dtype", "torch.float64") == "torch.float64" else LOOSE_GRAD
        for name, p in model.named_parameters():
            expect(name in grads, f"the model has no parameter {name}", describe)
            expect(grads[name] is not None or not p.grad.any(),
                   f"no gradient reached {name}: forward's outputs must stay connected to the parameters "
                   "(no .detach(), .item() or torch.no_grad() inside)", describe)
            got = grads[name] if grads[name] is not None else torch.zeros_like(p.grad)
            expect_tensor(f"gradient of {name}", got, p.grad, case=describe, check_dtype=False, **tol)
    prop()


@check()
def full_size_captioner_matches_the_reference_in_float32(student, ctx):
    """At the default sizes in float32, forward and step match the reference with the same weights."""
    for seed in (501, 502):
        sizes = dict(seed=seed, N=6, T=10, L=64, n_vocab=reference.VOCAB_SIZE, D=50, E=32, H=96, K=32)
        _check_forward(student, sizes, torch.float32)
        _check_steps(student, sizes, torch.float32)


# -- helpers -----------------------------------------------------------------------------------------------

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
    context, weights = expect_tuple("attend result (context, weights)", result, 2, describe)
    for name, before, got in zip(("query", "keys", "values"), (q, k, v), after):
        expect_tensor(f"{name} after attend (attend must not modify its inputs)", got, before, rtol=0, atol=0,
                      case=describe)
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
    expect(abs(sums[worst].item() - 1) <= tol * w.shape[-1] + tol,
           f"{name}: row {worst} sums to {sums[worst].item():.9g} over L, expected 1", describe)


def _expect_in_hull(context, values, describe):
    """Each coordinate of the context lies between the smallest and largest value of that coordinate."""
    c, v = context.double(), values.double()
    expect(bool(torch.isfinite(c).all()), "context: non-finite entries", describe)
    tol = 1e-9 if context.dtype == torch.float64 else 1e-5
    lo, hi = v.min(1).values, v.max(1).values
    outside = (c < lo - tol * (1 + lo.abs())) | (c > hi + tol * (1 + hi.abs()))
    if outside.any():
        n, j = (int(i) for i in outside.nonzero()[0])
        raise CheckFailed(f"context[{n}, {j}] = {c[n, j].item():.6g} lies outside the values' range "
                          f"[{lo[n, j].item():.6g}, {hi[n, j].item():.6g}] over the L locations: the context must "
                          f"be a convex combination of the values [{describe}]")


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
    expect(result.dtype == features.dtype, f"with_coords result: expected dtype {features.dtype} (the features'), "
           f"got {result.dtype}", describe)
    expect_tensor("with_coords result[..., :D] (the features, unchanged)", result[..., :D], features, rtol=0, atol=0,
                  case=describe)
    coords, expected = result[..., D:].double(), _expected_coords(grid).expand(n, L, 2)
    bad = ((coords - expected).abs() > COORDS["atol"] + COORDS["rtol"] * expected.abs()).any(-1)
    if bad.any():
        b, loc = (int(i) for i in bad.nonzero()[0])
        raise CheckFailed(f"with_coords: location {loc} (row {loc // grid}, column {loc % grid}) of batch item {b} "
                          f"got (row, col) = ({coords[b, loc, 0].item():.6g}, {coords[b, loc, 1].item():.6g}), "
                          f"expected ({expected[b, loc, 0].item():.6g}, {expected[b, loc, 1].item():.6g}); "
                          f"{int(bad.sum())} of "
                          f"{bad.numel()} locations wrong [{describe}]")
    expect_tensor("features after with_coords (with_coords must not modify its input)", after, features, rtol=0,
                  atol=0, case=describe)


def _reference_model(sizes: dict, dtype: torch.dtype):
    """The reference AttnCaptioner with seeded weights (keys and queries sharpened, so the attention maps
    are far from uniform), its constructor arguments and the description of the case."""
    config = {k: sizes[k] for k in ("n_vocab", "D", "E", "H", "K")}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(sizes["seed"])
        model = reference.AttnCaptioner(**config).to(dtype)
    with torch.no_grad():
        model.Wq.weight.mul_(3.0)
        model.Wk.weight.mul_(3.0)
    describe = (f"AttnCaptioner(n_vocab={config['n_vocab']}, D={config['D']}, E={config['E']}, H={config['H']}, "
                f"K={config['K']}) with the reference's weights, N={sizes['N']}, T={sizes['T']}, L={sizes['L']}, "
                f"{dtype}, seed={sizes['seed']}")
    return model, config, describe


def _state(model) -> dict:
    return {name: t.detach().clone() for name, t in model.state_dict().items()}


def _captioner_inputs(sizes: dict, config: dict, dtype: torch.dtype):
    n, T, L = sizes["N"], sizes["T"], sizes["L"]
    features = tensor(sizes["seed"] + 1, n, L, config["D"], dtype=dtype)
    g = torch.Generator().manual_seed(sizes["seed"] + 2)
    captions = torch.randint(0, config["n_vocab"], (n, T), generator=g)
    captions[:, 0] = 1  # START
    return features, captions


def _check_forward(student, sizes, dtype):
    model, config, describe = _reference_model(sizes, dtype)
    features, captions = _captioner_inputs(sizes, config, dtype)
    n, T, L, V = sizes["N"], sizes["T"], sizes["L"], config["n_vocab"]
    with torch.no_grad():
        exp_logits, exp_weights = copy.deepcopy(model).double()(features.double(), captions)
    out = student.call("attention.captioner_forward", config=config, state_dict=_state(model),
                       features=features, captions=captions)
    result, (features_after, captions_after) = expect_tuple("recipe result", out, 2, describe)
    logits, weights = expect_tuple("forward result (logits, weights)", result, 2, describe)
    expect_shaped("forward logits", logits, (n, T - 1, V), describe)
    expect_shaped("forward weights", weights, (n, T - 1, L), describe)
    allowed = (torch.float64, torch.float32) if dtype == torch.float64 else (dtype,)
    expect(logits.dtype in allowed, f"forward logits: expected dtype {dtype}, got {logits.dtype}", describe)
    tol = TIGHT if logits.dtype == torch.float64 else LOOSE
    expect_tensor("log_softmax of forward logits (logits are compared up to a constant per row)",
                  F.log_softmax(logits.double(), -1), F.log_softmax(exp_logits, -1), case=describe, **tol)
    expect_close("forward weights (attention maps)", weights, exp_weights, CLOSE, inputs=dtype,
                 case=describe, same_dtype=True)
    expect_tensor("features after forward", features_after, features, rtol=0, atol=0, case=describe)
    expect_tensor("captions after forward", captions_after, captions, rtol=0, atol=0, case=describe)


def _check_steps(student, sizes, dtype):
    model, config, describe = _reference_model(sizes, dtype)
    features, captions = _captioner_inputs(sizes, config, dtype)
    n = sizes["N"]
    with torch.no_grad():
        exp_logits, _ = copy.deepcopy(model).double()(features.double(), captions)
    expected = F.log_softmax(exp_logits, -1)
    out = student.call("attention.captioner_steps", config=config, state_dict=_state(model),
                       features=features, captions=captions)
    if isinstance(out, dict) and "step" in out:
        expect_tuple("step result (log_probs, state)", out["step"], 2, describe)
    expect(isinstance(out, dict) and isinstance(out.get("log_probs"), list), "the recipe's result is malformed",
           describe)
    for t, log_probs in enumerate(out["log_probs"]):
        expect_close(f"log_probs of step {t} (fed captions[:, {t}])", log_probs, expected[:, t], CLOSE, inputs=dtype,
                     case=describe, same_dtype=True)
    for i, (before, after) in enumerate(zip(out["first_before"], out["first_after"])):
        expect_tensor(f"state[{i}] after the first step (step must not modify the state it is given)", after, before,
                      rtol=0, atol=0, case=describe)
    state = out["last_state"]
    expect(isinstance(state, (tuple, list)) and len(state) > 0 and all(isinstance(s, torch.Tensor) for s in state),
           f"the state step returns: expected a tuple of tensors, got {type_name(state)}", describe)
    expect(all(s.dim() >= 1 and s.shape[0] == n for s in state),
           f"the state step returns: every tensor's first dimension must be the batch ({n}), got shapes "
           f"{[tuple(s.shape) for s in state]}", describe)
