"""Part 7 public checks: the factored input matrix U S V, the factored cell against nn.LSTMCell, and the styled update's
isolation. (The part's hidden checks and StyleNet trained on hidden data run in
the grader, after the deadline.)

Expected values are computed here, in float64: U S V; nn.LSTMCell with the injected weights; the styled loss by an
nn.LSTMCell run of the given StyleNet.forward under the romantic factor, from the very weights the student's model
had before each step. The styled update starts from a StyleNet as the reference initialises it (golden data,
autograder/public/golden/stylenet.pt; in the grader's round, drawn from its seed by its reference) and is judged on
its own: in its recipe the student's cell is replaced by nn.LSTMCell's op, so a bug in the cell costs points only
in the cell's checks."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import example, given
from torch import nn

from autograder.public import golden, limits
from autograder.public.checks import check, current_round
from autograder.public.compare import CheckFailed, expect, expect_tensor, expect_tuple, index_of, type_name
from autograder.public.strategies import FEW, cell_steps, factored_cases, style_mixes
from autograder.public.tolerances import EXACT, FACTORED_CELL, STYLED_LOSS
from shared.vocab import END, PAD, STYLE_IDS, VOCAB, VOCAB_SIZE, encode_batch

LECTURE = (48, 96, 32)  # E, H, rank of the lecture's cell
# (seed, N, E, H, rank) tried before any generated case: small, every width different, so that a broken cell fails
# at once on a readable case (and hypothesis has nothing to shrink).
FIRST_CASE = (0, 2, 3, 2, 4)


# -- the factored cell ----------------------------------------------------------------------------


def _cell_weights(seed: int, E: int, H: int, rank: int) -> dict[str, torch.Tensor]:
    """Float64 weights of a FactoredLSTMCell whose two factors clearly differ and whose biases are all nonzero."""
    g = torch.Generator().manual_seed(seed)

    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    S_factual = torch.eye(rank, dtype=torch.float64) + randn(rank, rank, scale=0.3)
    return {
        "U": randn(4 * H, rank, scale=1 / math.sqrt(rank)),
        "V": randn(rank, E, scale=1 / math.sqrt(E)),
        "S.factual": S_factual,
        "S.romantic": S_factual + randn(rank, rank, scale=0.5),
        "W_h.weight": randn(4 * H, H, scale=1 / math.sqrt(H)),
        "W_h.bias": randn(4 * H, scale=0.5),
        "b": randn(4 * H, scale=0.5),
    }


def _factor(w: dict, style: str | None, mix: float | None) -> torch.Tensor:
    """The S that input_weight(style, mix) uses (style None means "factual")."""
    if mix is not None:
        return (1 - mix) * w["S.factual"] + mix * w["S.romantic"]
    return w[f"S.{style or 'factual'}"]


def _input_weight_settings(lam: float) -> list[tuple[str, str | None, float | None]]:
    return [
        ("arguments", "factual", None),
        ("arguments", "romantic", None),
        ("arguments", None, lam),
        ("arguments", "romantic", lam),
        ("attributes", "romantic", None),
        ("attributes", "factual", lam),
        ("attributes", "romantic", 0.0),
        ("attributes", "factual", 1.0),
    ]


def _check_input_weights(student, seed, E, H, rank, lam):
    w = _cell_weights(seed, E, H, rank)
    settings = _input_weight_settings(lam)
    describe = f"E={E}, H={H}, rank={rank}, weights seed={seed}"
    got = student.call("stylenet.input_weights", E=E, H=H, rank=rank, weights=w, settings=settings)
    got = expect_tuple("input_weight results", got, len(settings), describe)
    for (how, style, mix), W in zip(settings, got):
        expected = w["U"] @ _factor(w, style, mix) @ w["V"]
        call = (
            f"input_weight({style!r}, {mix!r}) on a cell at its defaults"
            if how == "arguments"
            else f"input_weight() with cell.style={style!r}, cell.mix={mix!r}"
        )
        expect_tensor(
            call,
            W,
            expected,
            tolerance=FACTORED_CELL,
            case=describe + ("" if mix is None else "; a mix lam uses (1 - lam) S_factual + lam S_romantic"),
        )


@check()
def input_weight_is_u_s_v(student, ctx):
    """input_weight returns U S V for each style and (1 - lam) S_factual + lam S_romantic for a mix lam."""

    @FEW
    @given(factored_cases, style_mixes)
    @example(FIRST_CASE, 0.25)
    def prop(case, lam):
        seed, _, E, H, rank = case
        _check_input_weights(student, seed, E, H, rank, lam)

    prop()


def _lstm_cell_steps(w: dict, style, mix, xs, h0, c0):
    """nn.LSTMCell with weight_ih = U S V, weight_hh = W_h.weight, bias_ih = b, bias_hh = W_h.bias (float64)."""
    H, E = w["W_h.weight"].shape[1], w["V"].shape[1]
    ref = nn.LSTMCell(E, H, dtype=torch.float64)
    with torch.no_grad():
        ref.weight_ih.copy_(w["U"] @ _factor(w, style, mix) @ w["V"])
        ref.weight_hh.copy_(w["W_h.weight"])
        ref.bias_ih.copy_(w["b"])
        ref.bias_hh.copy_(w["W_h.bias"])
        state, out = (h0, c0), []
        for x in xs:
            state = ref(x, state)
            out.append(state)
    return out


def _check_forward(student, seed, N, E, H, rank, T, lam, scale=1.0):
    w = _cell_weights(seed, E, H, rank)
    g = torch.Generator().manual_seed(seed + 1)
    xs = torch.randn(T, N, E, generator=g, dtype=torch.float64) * scale
    h0 = torch.randn(N, H, generator=g, dtype=torch.float64)
    c0 = torch.randn(N, H, generator=g, dtype=torch.float64) * 2
    settings = [("factual", None), ("romantic", None), ("factual", lam), ("romantic", 0.0)]
    describe = f"N={N}, E={E}, H={H}, rank={rank}, {T} step(s), inputs seed={seed}"
    out = student.call("stylenet.forward_steps", E=E, H=H, rank=rank, weights=w, settings=settings, xs=xs, h0=h0, c0=c0)
    if not isinstance(out, dict) or "steps" not in out:
        raise CheckFailed(f"forward_steps: unexpected reply {type_name(out)} [{describe}]")
    for (style, mix), steps in zip(settings, out["steps"]):
        expected = _lstm_cell_steps(w, style, mix, xs, h0, c0)
        where = f"{describe}; cell.style={style!r}, cell.mix={mix!r}"
        for t, (got, (h, c)) in enumerate(zip(steps, expected)):
            got_h, got_c = expect_tuple(f"forward(x, (h, c)) at step {t + 1}", got, 2, where, exact=True)
            expect_tensor(
                f"h at step {t + 1} (gates i, f, g, o; h = o * tanh(c))", got_h, h, tolerance=FACTORED_CELL, case=where
            )
            expect_tensor(f"c at step {t + 1} (gates i, f, g, o)", got_c, c, tolerance=FACTORED_CELL, case=where)
    xs_after, h0_after, c0_after = expect_tuple("inputs after forward", out["inputs_after"], 3, describe)
    for name, before, after in (("x", xs, xs_after), ("h", h0, h0_after), ("c", c0, c0_after)):
        expect_tensor(
            f"the input {name} after forward (inputs must not be modified)",
            after,
            before,
            tolerance=EXACT,
            case=describe,
        )


@check()
def forward_matches_lstm_cell(student, ctx):
    """FactoredLSTMCell.forward equals nn.LSTMCell with weight_ih = U S V, under the cell's style and mix."""

    @FEW
    @given(factored_cases, cell_steps, style_mixes)
    @example(FIRST_CASE, 2, 0.25)
    def prop(case, T, lam):
        seed, N, E, H, rank = case
        _check_forward(student, seed, N, E, H, rank, T, lam)

    prop()


# -- the styled update --------------------------------------------------------------------------------

SMALL = dict(n_vocab=VOCAB_SIZE, D=3, L=4, E=8, H=6, DV=5, rank=4)
ROW_PARAMS = ("emb.weight", "out.weight", "out.bias")

OPTIMIZERS = {
    "adam_lecture": "Adam (lr 1e-2) over the lecture's [S_romantic, emb.weight, out.weight, out.bias]",
    "sgd_all": "SGD over every parameter (lr 0.1, momentum 0.9, weight decay 0.01)",
    "sgd_plain_all": "plain SGD over every parameter (lr 0.1)",
    "sgd_nesterov_lecture": "SGD with Nesterov momentum and weight decay over the lecture's four parameters",
    "adamw_all": "AdamW over every parameter (lr 1e-2, weight decay 0.1)",
    "rmsprop_all": "RMSprop over every parameter (momentum 0.5, weight decay 0.01)",
    "shrink_all": "an optimizer that shrinks every parameter by 1%, gradient or not",
}
T_STYLE = 12  # the length StyleNet's captions are encoded with (stylenet.T_STYLE, given)
# The public cases of the styled update: (seed, optimizer, the style before the step). The StyleNet they start
# from is golden data; the grader's round starts from StyleNets of its own.
GOLDEN_STYLED = ((3, "adam_lecture", ("factual", None)), (4, "sgd_all", ("factual", 0.4)))


def _style_rows() -> torch.Tensor:
    rows = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
    rows[list(STYLE_IDS)] = True
    return rows


def stylenet_weights(reference, seed: int, sizes: dict) -> dict[str, dict[str, torch.Tensor]]:
    """{"weights", "grads"}: a StyleNet's parameters (float32) as `reference` (the module solutions.stylenet)
    initialises it from `seed`, with two clearly different factors and varied output logits, and gradients for
    every parameter (the warm-up step that gives the optimizer state for all it holds). Plain data: the golden
    files hold these."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = reference.StyleNet(**sizes)
        with torch.no_grad():
            model.cell.S["romantic"].add_(0.3 * torch.randn_like(model.cell.S["romantic"]))
            model.cell.W_h.bias.normal_(0, 0.5)
            model.out.weight.mul_(4)
            model.out.bias.normal_(0, 1)
        weights = {name: p.detach().clone() for name, p in model.named_parameters()}
        grads = {name: 0.1 * torch.randn_like(p) for name, p in weights.items()}
    return {"weights": weights, "grads": grads}


def golden_cases(reference) -> dict[str, list]:
    """This part's golden data, computed with `reference` (python -m instructor golden)."""
    return {"styled": [stylenet_weights(reference, seed, SMALL) for seed, _, _ in GOLDEN_STYLED]}


FINGERPRINT = golden.fingerprint(GOLDEN_STYLED, SMALL, stylenet_weights)


def _styled_cases() -> list[tuple[int, str, tuple, dict]]:
    """(seed, optimizer, style before, {"weights", "grads"}) of this round: the golden cases in the public round;
    in the grader's, StyleNets of its own (its seed, its reference) with the same optimizers."""
    now = current_round()
    if now.public:
        starts = golden.load("stylenet", FINGERPRINT)["styled"]
        return [(seed, optimizer, style, start) for (seed, optimizer, style), start in zip(GOLDEN_STYLED, starts)]
    seeds = [(now.seed + 1000 * i) % 2**31 for i in range(len(GOLDEN_STYLED))]
    return [
        (seed, optimizer, style, stylenet_weights(now.reference("stylenet"), seed, SMALL))
        for seed, (_, optimizer, style) in zip(seeds, GOLDEN_STYLED)
    ]


def romantic_loss(params: dict, captions: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> float:
    """The styled loss of StyleNet's given forward under the romantic factor (mix None) with `params`: teacher forcing
    from (h0, c0) through nn.LSTMCell with weight_ih = U S_romantic V, then the mean cross-entropy over the non-PAD
    targets captions[:, 1:]; in float64."""
    w = {k: v.double() for k, v in params.items()}
    H, E = w["cell.W_h.weight"].shape[1], w["cell.V"].shape[1]
    cell = nn.LSTMCell(E, H, dtype=torch.float64)
    with torch.no_grad():
        cell.weight_ih.copy_(w["cell.U"] @ w["cell.S.romantic"] @ w["cell.V"])
        cell.weight_hh.copy_(w["cell.W_h.weight"])
        cell.bias_ih.copy_(w["cell.b"])
        cell.bias_hh.copy_(w["cell.W_h.bias"])
        h, c, logits = h0.double(), c0.double(), []
        for t in range(captions.shape[1] - 1):
            h, c = cell(w["emb.weight"][captions[:, t]], (h, c))
            logits.append(F.linear(h, w["out.weight"], w["out.bias"]))
        targets = captions[:, 1:]
        losses = F.cross_entropy(torch.stack(logits, 1).transpose(1, 2), targets, reduction="none")
        return (losses[targets != PAD].mean()).item()


def _styled_captions(seed: int, n: int, length: int = T_STYLE) -> torch.Tensor:
    """n captions (n, length): romantic rewrites of generated scenes (factual words inside), every other one cut
    short at a random length, so that many targets are PAD."""
    from shared.captions import romantic
    from shared.scenes import make_scenes

    captions = encode_batch([romantic(c) for c in make_scenes(n, seed).targets], length)
    g = torch.Generator().manual_seed(seed)
    for i in range(0, n, 2):
        words = int(torch.randint(1, 6, (1,), generator=g))
        captions[i, 1 + words] = END
        captions[i, 2 + words :] = PAD
    return captions


def _largest_change(before: torch.Tensor, after: torch.Tensor) -> str:
    diff = (after.double() - before.double()).abs()
    idx = index_of(diff.argmax(), diff.shape)
    return f"largest change {diff[idx].item():.3g} at {idx}"


def _run_styled(student, seed, sizes, optimizer, style_before, start, n, steps, expand=False):
    """Run `steps` styled updates on the student's StyleNet from `start` ({"weights", "grads"}, stylenet_weights);
    check that the inputs are left alone; return the recipe's answer, the captions, the state and the case."""
    weights, grads = start["weights"], start["grads"]
    captions = _styled_captions(seed, n)
    g = torch.Generator().manual_seed(seed + 2)
    rows = 1 if expand else n
    h0 = torch.tanh(torch.randn(rows, sizes["H"], generator=g))
    c0 = torch.randn(rows, sizes["H"], generator=g)
    describe = (
        f"StyleNet E={sizes['E']}, H={sizes['H']}, rank={sizes['rank']}; {n} captions of length "
        f"{captions.shape[1]}, PAD after END, its cell run by nn.LSTMCell's op; optimizer: "
        f"{OPTIMIZERS[optimizer]}; style before the step: {style_before}; seed={seed}"
    )
    out = student.call(
        "stylenet.styled_steps",
        timeout=limits.LIMITS.styled_steps_call,
        sizes=sizes,
        weights=weights,
        warmup_grads=grads,
        optimizer=optimizer,
        style_before=style_before,
        captions=captions,
        h0=h0,
        c0=c0,
        expand=expand,
        steps=steps,
    )
    if not isinstance(out, dict) or "params" not in out:
        raise CheckFailed(f"styled_steps: unexpected reply {type_name(out)} [{describe}]")
    state = (h0.expand(n, -1), c0.expand(n, -1))
    captions_after, h_after, c_after = expect_tuple("inputs after styled_text_step", out["inputs_after"], 3, describe)
    expect_tensor(
        "captions after styled_text_step (inputs must not be modified)",
        captions_after,
        captions,
        tolerance=EXACT,
        case=describe,
    )
    expect_tensor(
        "state h0 after styled_text_step (inputs must not be modified)",
        h_after,
        state[0],
        tolerance=EXACT,
        case=describe,
    )
    expect_tensor(
        "state c0 after styled_text_step (inputs must not be modified)",
        c_after,
        state[1],
        tolerance=EXACT,
        case=describe,
    )
    return out, captions, state, describe


def _check_isolation(student, seed, sizes, optimizer, style_before, start, n=6, steps=2, expand=False):
    """Every step: S_romantic and some style-word output rows move; nothing else moves by a single bit; the value
    returned is the romantic loss of the weights before the step."""
    out, captions, state, describe = _run_styled(student, seed, sizes, optimizer, style_before, start, n, steps, expand)
    rows = _style_rows()
    params, values = out["params"], out["values"]
    for k in range(steps):
        before, after = params[k], params[k + 1]
        step = f"{describe}; step {k + 1} of {steps}"
        value = values[k]
        expect(
            isinstance(value, float),
            f"styled_text_step must return the loss as a Python float, got {type_name(value)}",
            step,
        )
        expected = romantic_loss(before, captions, *state)
        expect(
            STYLED_LOSS.accepts(value, expected),
            f"styled_text_step returned {value:.6f}, but the loss before the update (mean cross-entropy over "
            f"non-PAD targets, romantic factor, mix None) is {expected:.6f}",
            step,
        )
        for name, old in before.items():
            new = after.get(name)
            if not isinstance(new, torch.Tensor) or new.shape != old.shape:
                raise CheckFailed(f"parameter {name} is missing or changed shape [{step}]")
            if name == "cell.S.romantic":
                expect(not torch.equal(new, old), "S['romantic'] did not change: the styled update must train it", step)
            elif name in ROW_PARAMS:
                moved = (new != old).reshape(VOCAB_SIZE, -1).any(1)
                if (moved & ~rows).any():
                    r = int((moved & ~rows).nonzero()[0])
                    change = (new[r].double() - old[r].double()).abs().max().item()
                    raise CheckFailed(
                        f"{name}: row {r} ({VOCAB[r]!r}, not a style word) changed (by up to "
                        f"{change:.3g}); only the rows of the style words {list(STYLE_IDS)} may "
                        f"move [{step}]"
                    )
            elif not torch.equal(new, old):
                raise CheckFailed(
                    f"{name} changed ({_largest_change(old, new)}); every parameter but S['romantic'] "
                    f"and the style-word rows must stay bit-for-bit unchanged [{step}]"
                )
        out_moved = any(not torch.equal(after[p][rows], before[p][rows]) for p in ("out.weight", "out.bias"))
        expect(
            out_moved, "no style-word row of out.weight or out.bias changed: the styled update must train them", step
        )


@check()
def styled_step_changes_only_the_style_parameters(student, ctx):
    """styled_text_step changes S['romantic'] and style-word rows only, whatever the optimizer, and returns the loss."""
    for seed, optimizer, style_before, start in _styled_cases():
        _check_isolation(student, seed, SMALL, optimizer, style_before, start)
