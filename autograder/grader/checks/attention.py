"""Part 4 hidden checks: more attention cases (uniform weights, permuted locations, the model's sizes in float32),
coordinates on larger grids, attention_step, forward's gradients against the reference, and the full-size captioner.
(The public checks and the helpers both use: autograder/public/checks/attention/.)"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import example, given

from autograder.grader.strategies import float_dtypes, larger_grids, uniform_weight_causes
from autograder.public.checks import check
from autograder.public.checks.attention import (
    GRID,
    PROBE_ATTENTION,
    PROBE_CAPTIONER,
    PROBE_COORDS,
    _attend,
    _attention_inputs,
    _captioner_inputs,
    _check_coords,
    _check_forward,
    _check_steps,
    _expect_distribution,
    _sdpa_context,
    _sdpa_weights,
    _state,
    captioner_case,
    expect_weights_depend_on_the_query,
)
from autograder.public.compare import expect, expect_close, expect_shaped, expect_tensor, expect_tuple, type_name
from autograder.public.strategies import PROPERTY, attention_cases, captioner_sizes, coords_cases, seeds, tensor
from autograder.public.tolerances import ATTENTION, ATTENTION_GRAD, ATTENTION_GRAD_FLOAT64, EXACT
from solutions import attention as reference


@check()
def uniform_weights_give_the_mean_of_the_values(student, ctx):
    """With equal keys or a zero query, attend's weights are uniform and the context is the mean of the values."""

    @PROPERTY
    @given(attention_cases, uniform_weight_causes)
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
        expect_close("weights", weights, uniform, ATTENTION, inputs=torch.float64, case=describe, same_dtype=True)
        expect_close("context", context, v.mean(1), ATTENTION, inputs=torch.float64, case=describe, same_dtype=True)

    prop()
    expect_weights_depend_on_the_query(student, "uniform weights under equal keys or a zero query")


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
        expect_close(
            "context of the permuted locations",
            context_p,
            context.double(),
            ATTENTION,
            inputs=context.dtype,
            case=describe,
            same_dtype=True,
        )
        expect_close(
            "weights of the permuted locations",
            weights_p,
            weights.double()[:, perm],
            ATTENTION,
            inputs=weights.dtype,
            case=describe,
            same_dtype=True,
        )

    prop()
    expect_weights_depend_on_the_query(student, "invariance to permuting the locations")


@check()
def attend_matches_sdpa_at_model_size_in_float32(student, ctx):
    """On float32 inputs of the model's sizes (L = 64, d = 32, D = 50) attend matches SDPA and returns float32."""
    for seed in (401, 402, 403):
        n = 16
        q, k, v = (
            tensor(seed, n, 32, dtype=torch.float32),
            tensor(seed + 1, n, 64, 32, dtype=torch.float32),
            tensor(seed + 2, n, 64, 50, dtype=torch.float32),
        )
        describe = f"N={n}, L=64, d=32, D=50, float32, seed={seed}"
        context, weights = _attend(student, q, k, v, describe)
        q64, k64, v64 = q.double(), k.double(), v.double()
        expect_close(
            "context",
            context,
            _sdpa_context(q64, k64, v64),
            ATTENTION,
            inputs=torch.float32,
            case=describe,
            same_dtype=True,
        )
        expect_close(
            "weights", weights, _sdpa_weights(q64, k64), ATTENTION, inputs=torch.float32, case=describe, same_dtype=True
        )


@check()
def with_coords_keeps_dtype_and_features_on_larger_grids(student, ctx):
    """with_coords keeps the features' dtype (float64 too) and values, for grids up to 16."""

    @PROPERTY
    @given(coords_cases, larger_grids, float_dtypes)
    @example(PROBE_COORDS, 3, torch.float64)
    def prop(case, grid, dtype):
        seed, n, _, D = case
        features = tensor(seed, n, grid * grid, D, dtype=dtype)
        _check_coords(student, features, grid, f"N={n}, grid={grid}, D={D}, {dtype}, seed={seed}")

    prop()
    _check_coords(student, tensor(8, 4, 64, 48, dtype=torch.float32), GRID, "N=4, grid=8, D=48 (the encoder's grid)")


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
        out = student.call(
            "attention.captioner_attention_step", config=config, state_dict=_state(model), h=h, c=c, features=features
        )
        result, state_after = expect_tuple("recipe result", out, 2, describe)
        context, weights = expect_tuple("attention_step result (context, weights)", result, 2, describe, exact=True)
        expect_close(
            "attention_step weights",
            weights,
            expected_weights,
            ATTENTION,
            inputs=torch.float64,
            case=describe,
            same_dtype=True,
        )
        _expect_distribution("attention_step weights", weights, describe)
        expect_close(
            "attention_step context",
            context,
            expected_context,
            ATTENTION,
            inputs=torch.float64,
            case=describe,
            same_dtype=True,
        )
        for name, before, after in zip(("h", "c", "features", "keys"), state, state_after):
            expect_tensor(f"state {name} after attention_step", after, before, tolerance=EXACT, case=describe)

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
        out = student.call(
            "attention.captioner_gradients",
            config=config,
            state_dict=_state(model),
            features=features,
            captions=captions,
            logit_weights=logit_weights,
            map_weights=map_weights,
        )
        if isinstance(out, dict) and "forward" in out:
            got = out["forward"]
            logits_s, weights_s = expect_tuple("forward result (logits, weights)", got, 2, describe)
            expect_shaped("forward logits", logits_s, (n, T - 1, V), describe)
            expect_shaped("forward weights", weights_s, (n, T - 1, L), describe)
        expect(
            isinstance(out, dict) and isinstance(out.get("gradients"), dict),
            f"expected the gradients of the model's parameters, got {type_name(out)}",
            describe,
        )
        grads = out["gradients"]
        tol = ATTENTION_GRAD_FLOAT64 if out.get("dtype", "torch.float64") == "torch.float64" else ATTENTION_GRAD
        for name, p in model.named_parameters():
            expect(name in grads, f"the model has no parameter {name}", describe)
            expect(
                grads[name] is not None or not p.grad.any(),
                f"no gradient reached {name}: forward's outputs must stay connected to the parameters "
                "(no .detach(), .item() or torch.no_grad() inside)",
                describe,
            )
            got = grads[name] if grads[name] is not None else torch.zeros_like(p.grad)
            expect_tensor(f"gradient of {name}", got, p.grad, tolerance=tol, case=describe, check_dtype=False)

    prop()


@check()
def full_size_captioner_matches_the_reference_in_float32(student, ctx):
    """At the default sizes in float32, forward and step match the reference with the same weights."""
    for seed in (501, 502):
        sizes = dict(seed=seed, N=6, T=10, L=64, n_vocab=reference.VOCAB_SIZE, D=50, E=32, H=96, K=32)
        case = captioner_case(reference, sizes, torch.float32)
        _check_forward(student, case)
        _check_steps(student, case)


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
    describe = (
        f"AttnCaptioner(n_vocab={config['n_vocab']}, D={config['D']}, E={config['E']}, H={config['H']}, "
        f"K={config['K']}) with the reference's weights, N={sizes['N']}, T={sizes['T']}, L={sizes['L']}, "
        f"{dtype}, seed={sizes['seed']}"
    )
    return model, config, describe
