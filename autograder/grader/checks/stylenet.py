"""Part 7 hidden checks: the factored cell on more and larger cases, its gradients against nn.LSTMCell's, and the styled
update under more optimizers and as one gradient step on the romantic loss (the reference StyleNet and Part 1's
reference caption loss). (The public checks and the helpers both use: autograder/public/checks/stylenet.py.)"""

from __future__ import annotations

import torch
from hypothesis import example, given
from torch import nn

from autograder.grader.strategies import batched_cell_sizes, cell_input_scales, cell_sizes, more_cell_steps
from autograder.grader.tolerances import STYLED_SGD_STEP
from autograder.public.checks import check
from autograder.public.checks.stylenet import (
    FIRST_CASE,
    LECTURE,
    ROW_PARAMS,
    SMALL,
    _cell_weights,
    _check_forward,
    _check_input_weights,
    _check_isolation,
    _run_styled,
    _style_rows,
    stylenet_weights,
)
from autograder.public.compare import expect, expect_tensor, type_name
from autograder.public.limits import LIMITS
from autograder.public.strategies import FEW, PROPERTY, factored_cases, seeds, style_mixes
from autograder.public.tolerances import FACTORED_CELL
from shared.encoder import D_ANN, L_GRID
from shared.vocab import VOCAB_SIZE
from solutions import stylenet as reference
from solutions.show_and_tell import caption_loss

LECTURE_NET = dict(n_vocab=VOCAB_SIZE, D=D_ANN, L=L_GRID, E=48, H=96, DV=64, rank=32)  # StyleNet's defaults
STYLED = ("cell.S.romantic", "emb.weight", "out.weight", "out.bias")


def _reference_loss_and_grads(sizes: dict, params: dict, captions, h0, c0):
    """The styled loss under the romantic factor (mix None) and its gradient, in float64."""
    with torch.random.fork_rng():
        model = reference.StyleNet(**sizes).to(torch.float64)
    model.load_state_dict(params)
    model.set_style("romantic")
    loss = caption_loss(model(captions, (h0.double(), c0.double())), captions)
    loss.backward()
    return loss.item(), {
        name: p.grad if p.grad is not None else torch.zeros_like(p) for name, p in model.named_parameters()
    }


@check(timeout=LIMITS.hidden_check)
def input_weight_is_u_s_v_hidden(student, ctx):
    """input_weight is U S V for every style and mix, on more and larger cells."""

    @PROPERTY
    @given(seeds, cell_sizes, style_mixes)
    @example(5, LECTURE, 0.5)
    def prop(seed, sizes, lam):
        _check_input_weights(student, seed, *sizes, lam)

    prop()


@check(timeout=LIMITS.hidden_check)
def forward_matches_lstm_cell_hidden(student, ctx):
    """forward equals nn.LSTMCell for every style and mix over several steps, on more and larger cells and inputs."""

    @PROPERTY
    @given(seeds, batched_cell_sizes, more_cell_steps, style_mixes, cell_input_scales)
    @example(5, (4, *LECTURE), 3, 0.5, 1.0)
    def prop(seed, sizes, T, lam, scale):
        _check_forward(student, seed, *sizes, T, lam, scale)

    prop()


def _expected_cell_grads(w, style, mix, x, h0, c0, grad_h, grad_c):
    leaves = {k: v.clone().requires_grad_() for k, v in w.items()}
    inputs = {k: v.clone().requires_grad_() for k, v in dict(x=x, h0=h0, c0=c0).items()}
    H, E = w["W_h.weight"].shape[1], w["V"].shape[1]
    S = ((1 - mix) * leaves["S.factual"] + mix * leaves["S.romantic"]) if mix is not None else leaves[f"S.{style}"]
    lstm = nn.LSTMCell(E, H, dtype=torch.float64)
    weights = {
        "weight_ih": leaves["U"] @ S @ leaves["V"],
        "weight_hh": leaves["W_h.weight"],
        "bias_ih": leaves["b"],
        "bias_hh": leaves["W_h.bias"],
    }
    h, c = torch.func.functional_call(lstm, weights, (inputs["x"], (inputs["h0"], inputs["c0"])))
    ((h * grad_h).sum() + (c * grad_c).sum()).backward()
    grads = {k: v.grad if v.grad is not None else torch.zeros_like(v) for k, v in leaves.items()}
    grads.update({k: v.grad for k, v in inputs.items()})
    return grads


@check(timeout=LIMITS.hidden_check)
def forward_gradients_match_lstm_cell(student, ctx):
    """Gradients reach U, V, the factors in use, W_h, b and the inputs exactly as through nn.LSTMCell."""

    @FEW
    @given(factored_cases, style_mixes)
    @example(FIRST_CASE, 0.25)
    def prop(case, lam):
        seed, N, E, H, rank = case
        w = _cell_weights(seed, E, H, rank)
        g = torch.Generator().manual_seed(seed + 3)
        x, h0, c0, grad_h, grad_c = (torch.randn(N, k, generator=g, dtype=torch.float64) for k in (E, H, H, H, H))
        for style, mix in (("factual", None), ("romantic", None), ("romantic", lam)):
            describe = f"N={N}, E={E}, H={H}, rank={rank}, seed={seed}; cell.style={style!r}, cell.mix={mix!r}"
            got = student.call(
                "stylenet.forward_gradients",
                E=E,
                H=H,
                rank=rank,
                weights=w,
                style=style,
                mix=mix,
                x=x,
                h0=h0,
                c0=c0,
                grad_h=grad_h,
                grad_c=grad_c,
            )
            expected = _expected_cell_grads(w, style, mix, x, h0, c0, grad_h, grad_c)
            expect(isinstance(got, dict), f"forward_gradients: unexpected reply {type_name(got)}", describe)
            for name, e in expected.items():
                a = got.get(name)
                if a is None:
                    expect(not e.any(), f"no gradient reached {name} (is the computation detached?)", describe)
                    continue
                expect_tensor(f"gradient of {name}", a, e, tolerance=FACTORED_CELL, case=describe)

    prop()


@check(timeout=LIMITS.hidden_styled_check)
def styled_step_changes_only_the_style_parameters_hidden(student, ctx):
    """The styled update's isolation and returned loss hold for more optimizers, styles, sizes and an expanded state."""
    cases = [
        (11, SMALL, "adamw_all", ("romantic", None), False),
        (12, SMALL, "shrink_all", ("factual", 0.7), False),
        (13, SMALL, "rmsprop_all", ("romantic", 0.0), True),
        (14, SMALL, "sgd_nesterov_lecture", ("factual", None), True),
        (15, LECTURE_NET, "adam_lecture", ("factual", None), True),
        (16, LECTURE_NET, "sgd_all", ("romantic", 0.25), False),
    ]
    for seed, sizes, optimizer, style_before, expand in cases:
        _check_isolation(
            student,
            seed,
            sizes,
            optimizer,
            style_before,
            stylenet_weights(reference, seed, sizes),
            n=8,
            steps=2,
            expand=expand,
        )


@check(timeout=LIMITS.hidden_check)
def styled_step_is_a_gradient_step_on_the_romantic_loss(student, ctx):
    """With plain SGD, S['romantic'] and the style-word rows take one gradient step on the styled loss."""
    for seed, style_before in ((21, ("factual", None)), (22, ("factual", 0.5))):
        out, captions, state, describe = _run_styled(
            student, seed, SMALL, "sgd_plain_all", style_before, stylenet_weights(reference, seed, SMALL), 8, 1
        )
        before, after = out["params"][0], out["params"][1]
        _, grads = _reference_loss_and_grads(SMALL, before, captions, *state)
        rows = _style_rows()
        for name in STYLED:
            grad = grads[name]
            if name in ROW_PARAMS:
                grad = grad * (rows.unsqueeze(1) if grad.dim() == 2 else rows)
            expected = before[name].double() - 0.1 * grad
            expect_tensor(
                f"{name} after one plain SGD step (lr 0.1) on the styled loss, the other rows' gradient masked to zero",
                after[name],
                expected.float(),
                tolerance=STYLED_SGD_STEP,
                case=describe,
            )
