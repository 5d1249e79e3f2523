"""Part 4 public checks, the soft-attention captioner with the reference's weights: forward and step-by-step decoding
on the golden cases (captioner_case, golden_cases, FINGERPRINT), or on the grader's own cases in its round."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from hypothesis import given

from autograder.public import golden
from autograder.public.checks import check, current_round
from autograder.public.compare import (
    expect,
    expect_close,
    expect_shaped,
    expect_tensor,
    expect_tuple,
    type_name,
)
from autograder.public.strategies import FEW, captioner_sizes, tensor
from autograder.public.tolerances import ATTENTION, EXACT

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
    expect_tensor(
        "log_softmax of forward logits (logits are compared up to a constant per row)",
        F.log_softmax(logits.double(), -1),
        F.log_softmax(exp_logits, -1),
        tolerance=ATTENTION.for_dtypes(torch.float64, logits.dtype),
        case=describe,
    )
    expect_close(
        "forward weights (attention maps)",
        weights,
        exp_weights,
        ATTENTION,
        inputs=dtype,
        case=describe,
        same_dtype=True,
    )
    expect_tensor("features after forward", features_after, features, tolerance=EXACT, case=describe)
    expect_tensor("captions after forward", captions_after, captions, tolerance=EXACT, case=describe)


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
            ATTENTION,
            inputs=dtype,
            case=describe,
            same_dtype=True,
        )
    for i, (before, after) in enumerate(zip(out["first_before"], out["first_after"])):
        expect_tensor(
            f"state[{i}] after the first step (step must not modify the state it is given)",
            after,
            before,
            tolerance=EXACT,
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
