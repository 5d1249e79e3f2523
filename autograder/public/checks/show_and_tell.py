"""Part 1 public checks: the ReLU step against nn.RNNCell, the masked loss against an enumerated oracle, the
captioner's init_state and step against their closed forms, forward against nn.RNN and against nn.RNNCell unrolled with
the image at the first step, and the student's own step-by-step decoding against the student's own forward (weights
injected by the grader, so nothing depends on how the student's model was initialised). (The part's hidden checks:
autograder/grader/checks/show_and_tell.py; its training check: autograder/grader/training.py.)

Expected values are computed here in float64: by nn.RNNCell / nn.RNN with explicitly injected weights, or by
enumerating the loss term by term; never from a reference solution. Student code runs in float32 (the contract's
dtype) and, for relu_rnn_step, also in float64, where the tolerance tightens when the answer is float64.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from autograder.public.checks import check
from autograder.public.compare import (CheckFailed, Tolerance, expect, expect_close, expect_float_tensor, expect_tensor,
                                       expect_tuple, type_name)
from autograder.public.strategies import DTYPES, FEW, loss_cases, model_cases, step_cases
from shared.vocab import END, PAD, START

F64 = torch.float64
# When everything involved is float64 (TIGHT), and when float32 is involved anywhere.
TIGHT = Tolerance(1e-9, 1e-9)
STEP_TOL = Tolerance(1e-5, 1e-5, float64=TIGHT)    # one step: a few float32 roundings of O(1) values
MODEL_TOL = Tolerance(1e-4, 1e-5, float64=TIGHT)   # a sequence of steps and a softmax in float32
EXACT = Tolerance(0.0, 0.0, float64=TIGHT)         # zeros, exact in float32


def _randn(g: torch.Generator, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=F64) * scale


def _expect_scalar(name: str, got, case: str) -> torch.Tensor:
    """A 0-d floating-point tensor, as the docstring's "a scalar tensor" says (a (1,) tensor is not one)."""
    if not isinstance(got, torch.Tensor):
        raise CheckFailed(f"{name}: expected a scalar tensor, got {type_name(got)} [{case}]")
    expect(got.dim() == 0, f"{name}: expected a scalar tensor (shape ()), got shape {tuple(got.shape)}", case)
    expect(got.is_floating_point(), f"{name}: expected a floating-point tensor, got dtype {got.dtype}", case)
    return got


def _step_inputs(case, with_image: bool):
    seed, n, e, h, dtype = case
    g = torch.Generator().manual_seed(seed)
    cast = DTYPES[dtype]
    inputs = {"x": _randn(g, n, e), "h": _randn(g, n, h), "W_xh": _randn(g, h, e, scale=1 / math.sqrt(e)),
              "W_hh": _randn(g, h, h, scale=1 / math.sqrt(h)), "b": _randn(g, h, scale=0.5),
              "image_term": _randn(g, n, h) if with_image else None}
    inputs = {k: (v.to(cast) if v is not None else None) for k, v in inputs.items()}
    describe = (f"x ({n}, {e}), h_prev ({n}, {h}), W_xh ({h}, {e}), W_hh ({h}, {h}), b ({h},), "
                f"image_term {f'({n}, {h})' if with_image else 'None'}, {dtype}, standard normal inputs, seed={seed}")
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
    expect_close("relu_rnn_step(x, h_prev, W_xh, W_hh, b" + (", image_term)" if with_image else ")"), got, expected,
                 STEP_TOL, inputs=inputs["x"].dtype, case=describe)


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


def random_captions(g: torch.Generator, n: int, t: int, v: int) -> torch.Tensor:
    """(n, t) captions START, 0..t-2 random words (ids 3..v-1), END, then PAD: every row has a non-PAD target."""
    rows = []
    for _ in range(n):
        k = int(torch.randint(0, t - 1, (1,), generator=g))
        words = torch.randint(3, v, (k,), generator=g).tolist()
        rows.append([START] + words + [END] + [PAD] * (t - 2 - k))
    return torch.tensor(rows, dtype=torch.long)


def _loss_inputs(case):
    seed, n, t, v, scale, dtype = case
    g = torch.Generator().manual_seed(seed)
    captions = random_captions(g, n, t, v)
    logits = _randn(g, n, t - 1, v, scale=scale).to(DTYPES[dtype])
    describe = (f"logits ({n}, {t - 1}, {v}) {dtype} standard normal x {scale:g}, captions ({n}, {t}) = "
                f"{captions.tolist()}, seed={seed}")
    return logits, captions, describe, g


def enumerated_loss(logits: torch.Tensor, captions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The masked mean cross-entropy and its gradient, term by term in float64: the mean over every (n, t) with
    captions[n, t + 1] != PAD of -log softmax(logits[n, t])[captions[n, t + 1]]."""
    log_probs = logits.to(F64).log_softmax(-1)
    total, count = 0.0, 0
    grad = torch.zeros_like(log_probs)
    for n in range(captions.shape[0]):
        for t in range(captions.shape[1] - 1):
            y = int(captions[n, t + 1])
            if y == PAD:
                continue
            total -= log_probs[n, t, y].item()
            count += 1
            grad[n, t] = log_probs[n, t].exp()
            grad[n, t, y] -= 1.0
    return torch.tensor(total / count, dtype=F64), grad / count


def _loss_and_grad(student, logits, captions, describe):
    out = student.call("show_and_tell.loss_and_grad", logits=logits, captions=captions)
    loss, grad = expect_tuple("caption_loss result", out, 2, describe)
    return _expect_scalar("caption_loss(logits, captions)", loss, describe), grad


def _loss_value_and_gradient_property(student, case) -> None:
    logits, captions, describe, _ = _loss_inputs(case)
    loss, grad = _loss_and_grad(student, logits, captions, describe)
    expected, expected_grad = enumerated_loss(logits, captions)
    expect_close("caption_loss(logits, captions)", loss, expected, STEP_TOL, inputs=logits.dtype, case=describe)
    expect(grad is not None, "caption_loss: no gradient reaches the logits (the loss must stay differentiable: "
           "no .item(), .detach() or torch.tensor(...) of a computed value)", describe)
    expect_close("d caption_loss / d logits", grad, expected_grad, STEP_TOL, inputs=logits.dtype, case=describe)


@check()
def caption_loss_is_the_masked_mean_cross_entropy(student, ctx):
    """caption_loss is the mean cross-entropy over non-PAD targets captions[:, 1:], and so is its gradient."""
    @FEW
    @given(loss_cases(4, 6, st.integers(4, 8)))
    def prop(case):
        _loss_value_and_gradient_property(student, case)
    prop()


@check()
def caption_loss_ignores_padded_positions(student, ctx):
    """Logits at PAD targets change neither caption_loss nor get any gradient; extra PAD columns change nothing."""
    @FEW
    @given(loss_cases(4, 6, st.integers(4, 8)), st.integers(1, 3))
    def prop(case, extra):
        logits, captions, describe, g = _loss_inputs(case)
        loss, grad = _loss_and_grad(student, logits, captions, describe)
        padded = captions[:, 1:] == PAD
        tol = STEP_TOL.for_dtypes(logits.dtype, loss.dtype)
        rtol, atol = tol.rtol, tol.atol
        if padded.any():
            changed = logits.clone()
            changed[padded] = _randn(g, int(padded.sum()), logits.shape[-1], scale=10.0).to(logits.dtype)
            other, _ = _loss_and_grad(student, changed, captions, describe)
            expect_tensor("caption_loss with the logits at PAD targets replaced by N(0, 10^2) values (expected: "
                          "the loss before the change)", other, loss,
                          rtol=rtol, atol=atol, case=describe, check_dtype=False)
            if grad is not None:
                grad = expect_float_tensor("d caption_loss / d logits", grad, tuple(logits.shape), describe)
                expect_tensor("d caption_loss / d logits at positions whose target is PAD", grad[padded],
                              torch.zeros(int(padded.sum()), logits.shape[-1], dtype=F64), rtol=0, atol=1e-12,
                              case=describe, check_dtype=False)
        longer = torch.cat([captions, torch.full((captions.shape[0], extra), PAD, dtype=torch.long)], 1)
        more = torch.cat([logits, _randn(g, logits.shape[0], extra, logits.shape[-1]).to(logits.dtype)], 1)
        other, _ = _loss_and_grad(student, more, longer, describe + f", then {extra} PAD column(s) appended")
        expect_tensor(f"caption_loss with {extra} all-PAD column(s) appended to captions (and logits) (expected: "
                      "the loss without them)", other, loss,
                      rtol=rtol, atol=atol, case=describe, check_dtype=False)
    prop()


def model_weights(g: torch.Generator, sizes: dict) -> dict[str, torch.Tensor]:
    """Every parameter of ShowTellRNN, random (float32 values), scaled to keep activations O(1). W_hh is a
    random matrix, neither the identity nor symmetric, so a transposed recurrence shows."""
    V, D, L, E, H, DV = (sizes[k] for k in ("n_vocab", "D", "L", "E", "H", "DV"))
    w = {"fc.weight": _randn(g, DV, D * L, scale=1 / math.sqrt(D * L)), "fc.bias": _randn(g, DV, scale=0.5),
         "emb.weight": _randn(g, V, E), "W_xh.weight": _randn(g, H, E, scale=1 / math.sqrt(E)),
         "W_xh.bias": _randn(g, H, scale=0.5), "W_hh.weight": _randn(g, H, H, scale=1 / math.sqrt(H)),
         "W_ih.weight": _randn(g, H, DV, scale=1 / math.sqrt(DV)), "out.weight": _randn(g, V, H, scale=1 / math.sqrt(H)),
         "out.bias": _randn(g, V, scale=0.5)}
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
    describe = (f"ShowTellRNN(n_vocab={v}, D={d}, L={locs}, E={e}, H={h}, DV={dv}) with random weights"
                + (f" ({', '.join(zero)} zeroed)" if zero else "") + f", features ({n}, {locs}, {d}), captions "
                f"{captions.tolist()}, float32, seed={seed}")
    return sizes, weights, features, captions, describe, g


def _expect_log_probs(name: str, got, expected_logits: torch.Tensor, case: str) -> None:
    """Compare teacher-forced logits as log-probabilities: logits are defined up to a constant per position,
    so returning log_softmax(logits) instead is accepted."""
    got = expect_float_tensor(name, got, tuple(expected_logits.shape), case)
    expect(bool(torch.isfinite(got).all()), f"{name}: non-finite values", case)
    rtol, atol = MODEL_TOL.rtol, MODEL_TOL.atol
    expect_tensor(f"log_softmax({name}, -1)", got.to(F64).log_softmax(-1), expected_logits.to(F64).log_softmax(-1),
                  rtol=rtol, atol=atol, case=case)


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
        expect_close("init_state(features)[0] (h)", h, torch.zeros(n, hidden, dtype=F64), EXACT, inputs=F64,
                     case=describe)
        expect_close("init_state(features)[1] (image_term = W_ih v)", image_term, expected, STEP_TOL,
                     inputs=torch.float32, case=describe)
    prop()


def step_oracle(weights: dict, tokens: torch.Tensor, h: torch.Tensor,
                image_term: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(log_softmax(out(h')), h') with h' = relu_rnn_step(emb(tokens), h, W_xh, W_hh, b, image_term) computed by
    nn.RNNCell, in float64 (the docstring of step)."""
    w = {k: t.to(F64) for k, t in weights.items()}
    new_h = rnn_cell_oracle(w["emb.weight"][tokens], h, w["W_xh.weight"], w["W_hh.weight"], w["W_xh.bias"], image_term)
    return F.linear(new_h, w["out.weight"], w["out.bias"]).log_softmax(-1), new_h


@check()
def step_matches_the_recurrence(student, ctx):
    """step returns log_softmax(out(h)) with h = relu_rnn_step(emb(tokens), ...) and the state (h, zeros)."""
    @FEW
    @given(model_cases, st.booleans())
    def prop(case, with_image):
        sizes, weights, _, _, describe, g = _model_inputs(case)
        n, hidden, v = case[1], sizes["H"], sizes["n_vocab"]
        tokens = torch.randint(0, v, (n,), generator=g)
        h = _randn(g, n, hidden).abs().float()
        image_term = _randn(g, n, hidden).float() if with_image else torch.zeros(n, hidden)
        describe += (f", tokens {tokens.tolist()}, state (h ({n}, {hidden}) |N(0, 1)|, image_term "
                     + ("N(0, 1))" if with_image else "zeros)"))
        got = student.call("show_and_tell.step", sizes=sizes, weights=weights, tokens=tokens, state=(h, image_term))
        log_probs, state = expect_tuple("step(tokens, state) result (log_probs, state)", got, 2, describe, exact=True)
        expected, expected_h = step_oracle(weights, tokens, h, image_term)
        expect_close("step(tokens, state)[0] (log_probs)", log_probs, expected, MODEL_TOL, inputs=torch.float32,
                     case=describe)
        new_h, new_image_term = expect_tuple("step(tokens, state)[1] (the new state (h, image_term))", state, 2,
                                             describe, exact=True)
        expect_close("the new state's h", new_h, expected_h, STEP_TOL, inputs=torch.float32, case=describe)
        expect_close("the new state's image_term (spent after one step: zeros)", new_image_term,
                     torch.zeros(n, hidden, dtype=F64), EXACT, inputs=F64, case=describe)
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
        _expect_log_probs("forward(features, captions)[:, 0], the first step (START and the image term)", got[:, :1],
                          expected[:, :1], describe)
        _expect_log_probs("forward(features, captions)[:, 1:], the steps after the first (no image term)", got[:, 1:],
                          expected[:, 1:], describe)
    prop()


@check()
def step_by_step_decoding_equals_teacher_forcing(student, ctx):
    """init_state then step on captions[:, t] gives your forward's log-probabilities at every t."""
    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, captions, describe, _ = _model_inputs(case)
        got = student.call("show_and_tell.step_by_step", sizes=sizes, weights=weights, features=features,
                           captions=captions)
        steps = captions.shape[1] - 1
        expect(isinstance(got, list) and len(got) == steps, f"expected {steps} steps' log_probs", describe)
        n, v = captions.shape[0], sizes["n_vocab"]
        stepped = torch.stack([expect_float_tensor(f"step {t}: log_probs", lp, (n, v), describe).to(F64)
                               for t, lp in enumerate(got)], 1)
        forward = expect_float_tensor("forward(features, captions)", _forward(student, sizes, weights, features,
                                                                               captions), (n, steps, v), describe)
        forward = forward.to(F64).log_softmax(-1)
        rtol, atol = MODEL_TOL.rtol, MODEL_TOL.atol
        for t in range(steps):  # the first step that disagrees is the one to look at
            expect_tensor(f"your step-by-step decoding (init_state, then step on captions[:, {t}]) disagrees with "
                          f"log_softmax of your forward(features, captions)[:, {t}]", stepped[:, t], forward[:, t],
                          rtol=rtol, atol=atol, case=describe)
    prop()
