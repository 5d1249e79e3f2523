"""Part 1 public checks, the captioner ShowTellRNN with injected weights: init_state and step against their closed
forms, forward against nn.RNN and against nn.RNNCell unrolled with the image at the first step, and step-by-step
decoding against the student's own forward (with the anchor a constant model fails)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import given
from torch import nn

from autograder.public.checks import check
from autograder.public.checks.show_and_tell.cells import F64, _randn, rnn_cell_oracle
from autograder.public.checks.show_and_tell.loss import random_captions
from autograder.public.compare import (
    expect,
    expect_close,
    expect_float_tensor,
    expect_tensor,
    expect_tuple,
)
from autograder.public.strategies import (
    FEW,
    image_term_flags,
    model_cases,
)
from autograder.public.tolerances import (
    RNN_MODEL,
    RNN_STEP,
    RNN_ZEROS,
)
from shared.vocab import END, START


def model_weights(g: torch.Generator, sizes: dict) -> dict[str, torch.Tensor]:
    """Every parameter of ShowTellRNN, random (float32 values), scaled to keep activations O(1). W_hh is a
    random matrix, neither the identity nor symmetric, so a transposed recurrence shows."""
    V, D, L, E, H, DV = (sizes[k] for k in ("n_vocab", "D", "L", "E", "H", "DV"))
    w = {
        "fc.weight": _randn(g, DV, D * L, scale=1 / math.sqrt(D * L)),
        "fc.bias": _randn(g, DV, scale=0.5),
        "emb.weight": _randn(g, V, E),
        "W_xh.weight": _randn(g, H, E, scale=1 / math.sqrt(E)),
        "W_xh.bias": _randn(g, H, scale=0.5),
        "W_hh.weight": _randn(g, H, H, scale=1 / math.sqrt(H)),
        "W_ih.weight": _randn(g, H, DV, scale=1 / math.sqrt(DV)),
        "out.weight": _randn(g, V, H, scale=1 / math.sqrt(H)),
        "out.bias": _randn(g, V, scale=0.5),
    }
    return {k: v.float() for k, v in w.items()}


def _model_inputs(case, zero: tuple[str, ...] = ()):
    seed, n, t, v, d, locs, e, h, dv = case
    sizes = {"n_vocab": v, "D": d, "L": locs, "E": e, "H": h, "DV": dv}
    g = torch.Generator().manual_seed(seed)
    weights = model_weights(g, sizes)
    for name in zero:
        weights[name] = torch.zeros_like(weights[name])
    features = _randn(g, n, locs, d).float()
    captions = random_captions(g, n, t, v)
    describe = (
        f"ShowTellRNN(n_vocab={v}, D={d}, L={locs}, E={e}, H={h}, DV={dv}) with random weights"
        + (f" ({', '.join(zero)} zeroed)" if zero else "")
        + f", features ({n}, {locs}, {d}), captions "
        f"{captions.tolist()}, float32, seed={seed}"
    )
    return sizes, weights, features, captions, describe, g


def _expect_log_probs(name: str, got, expected_logits: torch.Tensor, case: str) -> None:
    """Compare teacher-forced logits as log-probabilities: logits are defined up to a constant per position,
    so returning log_softmax(logits) instead is accepted."""
    got = expect_float_tensor(name, got, tuple(expected_logits.shape), case)
    expect(bool(torch.isfinite(got).all()), f"{name}: non-finite values", case)
    expect_tensor(
        f"log_softmax({name}, -1)",
        got.to(F64).log_softmax(-1),
        expected_logits.to(F64).log_softmax(-1),
        tolerance=RNN_MODEL,
        case=case,
    )


def _forward(student, sizes, weights, features, captions):
    return student.call("show_and_tell.forward", sizes=sizes, weights=weights, features=features, captions=captions)


def image_term_oracle(weights: dict, features: torch.Tensor) -> torch.Tensor:
    """W_ih v with v = relu(fc(flattened grid)), in float64 (the docstring of init_state)."""
    w = {k: t.to(F64) for k, t in weights.items()}
    v = torch.relu(F.linear(features.to(F64).flatten(1), w["fc.weight"], w["fc.bias"]))
    return F.linear(v, w["W_ih.weight"])


@check()
def init_state_holds_zeros_and_the_image_term(student, ctx):
    """init_state returns (h = zeros (N, H), image_term = W_ih v) with v = relu(fc(flattened grid))."""

    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, _, describe, _ = _model_inputs(case)
        n, hidden = features.shape[0], sizes["H"]
        got = student.call("show_and_tell.init_state", sizes=sizes, weights=weights, features=features)
        h, image_term = expect_tuple("init_state(features)", got, 2, describe, exact=True)
        expected = image_term_oracle(weights, features)
        expect_close(
            "init_state(features)[0] (h)", h, torch.zeros(n, hidden, dtype=F64), RNN_ZEROS, inputs=F64, case=describe
        )
        expect_close(
            "init_state(features)[1] (image_term = W_ih v)",
            image_term,
            expected,
            RNN_STEP,
            inputs=torch.float32,
            case=describe,
        )

    prop()


def step_oracle(
    weights: dict, tokens: torch.Tensor, h: torch.Tensor, image_term: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(log_softmax(out(h')), h') with h' = relu_rnn_step(emb(tokens), h, W_xh, W_hh, b, image_term) computed by
    nn.RNNCell, in float64 (the docstring of step)."""
    w = {k: t.to(F64) for k, t in weights.items()}
    new_h = rnn_cell_oracle(w["emb.weight"][tokens], h, w["W_xh.weight"], w["W_hh.weight"], w["W_xh.bias"], image_term)
    return F.linear(new_h, w["out.weight"], w["out.bias"]).log_softmax(-1), new_h


@check()
def step_matches_the_recurrence(student, ctx):
    """step returns log_softmax(out(h)) with h = relu_rnn_step(emb(tokens), ...) and the state (h, zeros)."""

    @FEW
    @given(model_cases, image_term_flags)
    def prop(case, with_image):
        sizes, weights, _, _, describe, g = _model_inputs(case)
        n, hidden, v = case[1], sizes["H"], sizes["n_vocab"]
        tokens = torch.randint(0, v, (n,), generator=g)
        h = _randn(g, n, hidden).abs().float()
        image_term = _randn(g, n, hidden).float() if with_image else torch.zeros(n, hidden)
        describe += f", tokens {tokens.tolist()}, state (h ({n}, {hidden}) |N(0, 1)|, image_term " + (
            "N(0, 1))" if with_image else "zeros)"
        )
        got = student.call("show_and_tell.step", sizes=sizes, weights=weights, tokens=tokens, state=(h, image_term))
        log_probs, state = expect_tuple("step(tokens, state) result (log_probs, state)", got, 2, describe, exact=True)
        expected, expected_h = step_oracle(weights, tokens, h, image_term)
        expect_close(
            "step(tokens, state)[0] (log_probs)", log_probs, expected, RNN_MODEL, inputs=torch.float32, case=describe
        )
        new_h, new_image_term = expect_tuple(
            "step(tokens, state)[1] (the new state (h, image_term))", state, 2, describe, exact=True
        )
        expect_close("the new state's h", new_h, expected_h, RNN_STEP, inputs=torch.float32, case=describe)
        expect_close(
            "the new state's image_term (spent after one step: zeros)",
            new_image_term,
            torch.zeros(n, hidden, dtype=F64),
            RNN_ZEROS,
            inputs=F64,
            case=describe,
        )

    prop()


def nn_rnn_oracle(weights: dict, captions: torch.Tensor) -> torch.Tensor:
    """Logits out(nn.RNN(nonlinearity='relu')(emb(captions[:, :-1]))) in float64, the weights injected."""
    w = {k: v.to(F64) for k, v in weights.items()}
    hidden, e = w["W_xh.weight"].shape
    rnn = nn.RNN(e, hidden, nonlinearity="relu", batch_first=True, dtype=F64)
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(w["W_xh.weight"])
        rnn.weight_hh_l0.copy_(w["W_hh.weight"])
        rnn.bias_ih_l0.copy_(w["W_xh.bias"])
        rnn.bias_hh_l0.zero_()
        states, _ = rnn(w["emb.weight"][captions[:, :-1]])
    return states @ w["out.weight"].T + w["out.bias"]


@check()
def forward_matches_nn_rnn_without_the_image(student, ctx):
    """With W_ih = 0, forward equals out(nn.RNN(nonlinearity='relu')) on the embedded inputs captions[:, :-1]."""

    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, captions, describe, _ = _model_inputs(case, zero=("W_ih.weight",))
        got = _forward(student, sizes, weights, features, captions)
        _expect_log_probs("forward(features, captions)", got, nn_rnn_oracle(weights, captions), describe)

    prop()


def recurrence_oracle(weights: dict, features: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
    """Teacher-forced logits (N, T-1, V) in float64: nn.RNNCell unrolled over emb(captions[:, :-1]), the image term
    W_ih v added at the first step only (with START), then out(h_t) at every step (the docstring of forward)."""
    w = {k: t.to(F64) for k, t in weights.items()}
    image_term = image_term_oracle(weights, features)
    h = torch.zeros_like(image_term)
    logits = []
    for t in range(captions.shape[1] - 1):
        x = w["emb.weight"][captions[:, t]]
        h = rnn_cell_oracle(x, h, w["W_xh.weight"], w["W_hh.weight"], w["W_xh.bias"], image_term if t == 0 else None)
        logits.append(F.linear(h, w["out.weight"], w["out.bias"]))
    return torch.stack(logits, 1)


@check()
def forward_matches_the_recurrence_with_the_image(student, ctx):
    """forward gives the teacher-forced logits of the recurrence, the image term entering at the first step only."""

    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, captions, describe, _ = _model_inputs(case)
        got = _forward(student, sizes, weights, features, captions)
        expected = recurrence_oracle(weights, features, captions)
        got = expect_float_tensor("forward(features, captions)", got, tuple(expected.shape), describe)
        # The first step alone, then the rest: where the image enters shows in which of the two disagrees.
        _expect_log_probs(
            "forward(features, captions)[:, 0], the first step (START and the image term)",
            got[:, :1],
            expected[:, :1],
            describe,
        )
        _expect_log_probs(
            "forward(features, captions)[:, 1:], the steps after the first (no image term)",
            got[:, 1:],
            expected[:, 1:],
            describe,
        )

    prop()


@check()
def step_by_step_decoding_equals_teacher_forcing(student, ctx):
    """init_state then step on captions[:, t] gives your forward's log-probabilities at every t."""

    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, captions, describe, _ = _model_inputs(case)
        got = student.call(
            "show_and_tell.step_by_step", sizes=sizes, weights=weights, features=features, captions=captions
        )
        steps = captions.shape[1] - 1
        expect(isinstance(got, list) and len(got) == steps, f"expected {steps} steps' log_probs", describe)
        n, v = captions.shape[0], sizes["n_vocab"]
        stepped = torch.stack(
            [expect_float_tensor(f"step {t}: log_probs", lp, (n, v), describe).to(F64) for t, lp in enumerate(got)], 1
        )
        forward = expect_float_tensor(
            "forward(features, captions)",
            _forward(student, sizes, weights, features, captions),
            (n, steps, v),
            describe,
        )
        forward = forward.to(F64).log_softmax(-1)
        for t in range(steps):  # the first step that disagrees is the one to look at
            expect_tensor(
                f"your step-by-step decoding (init_state, then step on captions[:, {t}]) disagrees with "
                f"log_softmax of your forward(features, captions)[:, {t}]",
                stepped[:, t],
                forward[:, t],
                tolerance=RNN_MODEL,
                case=describe,
            )

    prop()
    expect_logits_depend_on_the_words_and_image(student)


# The anchor of the step-by-step identity, which a model whose logits are a constant satisfies: with these random
# weights (seed 1) the reference's log-probabilities move by 0.5 or more in every row when the word fed in at t = 1
# changes, and when the image changes at t = 0.
ANCHOR_CASE = (1, 2, 3, 8, 3, 4, 5, 6, 4)  # model_cases' (seed, N, T, V, D, L, E, H, DV)


ANCHOR_CAPTIONS = ([[START, 3, END], [START, 4, END]], [[START, 5, END], [START, 6, END]])


MOVES = 1e-2  # the least change of a log-probability that counts as a dependence (the reference's: 0.5 or more)


def expect_logits_depend_on_the_words_and_image(student) -> None:
    """forward's log-probabilities change at t = 1 with the word fed in at t = 1, and at t = 0 with the image."""
    sizes, weights, features, _, _, g = _model_inputs(ANCHOR_CASE)
    other_features = _randn(g, *features.shape).float()
    captions, other_captions = (torch.tensor(c, dtype=torch.long) for c in ANCHOR_CAPTIONS)
    describe = (
        f"the anchor of the step-by-step identity: ShowTellRNN({', '.join(f'{k}={v}' for k, v in sizes.items())})"
        f" with random weights, features {tuple(features.shape)}, captions {captions.tolist()} and "
        f"{other_captions.tolist()}, float32, seed={ANCHOR_CASE[0]}"
    )
    n, t, v = captions.shape[0], captions.shape[1] - 1, sizes["n_vocab"]

    def log_probs(feats, caps, which: str) -> torch.Tensor:
        got = expect_float_tensor(
            f"forward({which})", _forward(student, sizes, weights, feats, caps), (n, t, v), describe
        )
        return got.to(F64).log_softmax(-1)

    base = log_probs(features, captions, "features, captions")
    words = log_probs(features, other_captions, "features, other captions")
    moved = float((base[:, 1] - words[:, 1]).abs().max())
    expect(
        moved > MOVES,
        f"your logits do not depend on the words fed in: log_softmax(forward(features, captions))"
        f"[:, 1] moves by at most {moved:.3g} (expected more than {MOVES:g}) when the words fed in at t = 1 change "
        f"from {captions[:, 1].tolist()} to {other_captions[:, 1].tolist()}",
        describe,
    )
    image = log_probs(other_features, captions, "other features, captions")
    moved = float((base[:, 0] - image[:, 0]).abs().max())
    expect(
        moved > MOVES,
        f"your logits do not depend on the image: log_softmax(forward(features, captions))[:, 0] "
        f"moves by at most {moved:.3g} (expected more than {MOVES:g}) when the features change to other random "
        f"features",
        describe,
    )
