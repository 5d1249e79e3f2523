"""The Part 7 reference: the factored cell against nn.LSTMCell, and the styled update's isolation."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from shared.captions import is_styled
from shared.vocab import END, PAD, START, STYLE_IDS, VOCAB_SIZE, decode_batch
from solutions.show_and_tell import caption_loss
from solutions.stylenet import (
    T_STYLE,
    FactoredLSTMCell,
    StyleNet,
    style_captions,
    styled_corpus,
    styled_text_step,
    train_stylenet,
)

E, H, R = 12, 10, 6


def _cell(seed=0, dtype=torch.float64):
    torch.manual_seed(seed)
    cell = FactoredLSTMCell(E, H, R).to(dtype)
    with torch.no_grad():  # make the two factors clearly different
        cell.S["romantic"].add_(0.5 * torch.randn(R, R, dtype=dtype))
        cell.W_h.bias.normal_()
    return cell


def test_shapes_and_initialisation():
    cell = _cell(dtype=torch.float32)
    assert cell.U.shape == (4 * H, R) and cell.V.shape == (R, E) and cell.b.shape == (4 * H,)
    assert set(cell.S.keys()) == {"factual", "romantic"} and cell.S["factual"].shape == (R, R)
    assert torch.all(cell.b[H : 2 * H] == 2) and torch.all(cell.b[:H] == 0) and torch.all(cell.b[2 * H :] == 0)
    assert cell.style == "factual" and cell.mix is None
    assert cell.input_weight().shape == (4 * H, E)


@pytest.mark.parametrize("style, mix", [("factual", None), ("romantic", None), ("factual", 0.3), ("romantic", 0.7)])
def test_parity_with_lstm_cell(style, mix):
    cell = _cell()
    cell.style, cell.mix = style, mix
    S = cell.S[style] if mix is None else (1 - mix) * cell.S["factual"] + mix * cell.S["romantic"]
    ref = nn.LSTMCell(E, H).to(torch.float64)
    with torch.no_grad():
        ref.weight_ih.copy_(cell.U @ S @ cell.V)
        ref.weight_hh.copy_(cell.W_h.weight)
        ref.bias_ih.copy_(cell.b)
        ref.bias_hh.copy_(cell.W_h.bias)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, E, generator=g, dtype=torch.float64)
    h0 = torch.randn(5, H, generator=g, dtype=torch.float64)
    c0 = torch.randn(5, H, generator=g, dtype=torch.float64)
    copies = (x.clone(), h0.clone(), c0.clone())
    with torch.no_grad():
        h1, c1 = cell(x, (h0, c0))
        h2, c2 = ref(x, (h0, c0))
    torch.testing.assert_close(h1, h2, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(c1, c2, rtol=1e-10, atol=1e-12)
    for a, b in zip((x, h0, c0), copies):
        assert torch.equal(a, b)


def test_input_weight_arguments_override_attributes():
    cell = _cell()
    Wf = cell.U @ cell.S["factual"] @ cell.V
    Wr = cell.U @ cell.S["romantic"] @ cell.V
    with torch.no_grad():
        torch.testing.assert_close(cell.input_weight(), Wf)
        torch.testing.assert_close(cell.input_weight("romantic"), Wr)
        cell.style = "romantic"
        torch.testing.assert_close(cell.input_weight(), Wr)
        torch.testing.assert_close(cell.input_weight("factual"), Wf)
        cell.mix = 0.25  # the cell's mix wins over its style; explicit arguments win over both
        torch.testing.assert_close(cell.input_weight(), 0.75 * Wf + 0.25 * Wr)
        torch.testing.assert_close(cell.input_weight("factual"), Wf)
        torch.testing.assert_close(cell.input_weight(mix=0.0), Wf)
        torch.testing.assert_close(cell.input_weight(mix=1.0), Wr)


def test_unknown_style():
    cell = _cell()
    with pytest.raises(ValueError, match="humorous"):
        cell.input_weight("humorous")
    model = StyleNet()
    with pytest.raises(ValueError, match="humorous"):
        model.set_style("humorous")
    assert model.cell.style == "factual"


def _styled_batch(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    caps = torch.full((n, T_STYLE), PAD, dtype=torch.long)
    caps[:, 0] = START
    caps[:, 1:9] = torch.tensor(STYLE_IDS)[torch.randint(len(STYLE_IDS), (n, 8), generator=g)]
    caps[:, 4] = 3  # a factual word ("a") inside: its rows must not move
    caps[:, 9] = END
    return caps


class _ShrinkEverything(torch.optim.Optimizer):
    """A rogue optimizer: a gradient step where there is a gradient, and every parameter shrinks, gradient or not."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.sub_(group["lr"] * p.grad)
                p.mul_(0.99)


def _optimizers(model):
    return {
        "adam": torch.optim.Adam(model.parameters(), lr=1e-2),
        "sgd_momentum_decay": torch.optim.SGD(model.parameters(), lr=1e-1, momentum=0.9, weight_decay=0.01),
        "rogue": _ShrinkEverything(model.parameters()),
    }


@pytest.mark.parametrize("kind", ["adam", "sgd_momentum_decay", "rogue"])
def test_styled_step_touches_only_its_parameters(kind):
    torch.manual_seed(0)
    model = StyleNet()
    opt = _optimizers(model)[kind]
    g = torch.Generator().manual_seed(3)
    features = torch.randn(8, 64, 48, generator=g)
    # a factual step first, so that the optimizer holds momentum for every parameter
    loss = model(_styled_batch(8, seed=1), model.init_state(features)).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    model.set_style("factual", 0.4)
    with torch.no_grad():
        state = model.init_state(features)
    captions = _styled_batch()
    captions_copy = [captions.clone(), state[0].clone(), state[1].clone()]
    for _ in range(3):
        value = styled_text_step(model, captions, state, opt)
        assert isinstance(value, float) and value > 0
    assert (model.cell.style, model.cell.mix) == ("factual", 0.4)
    for a, b in zip((captions, *state), captions_copy):
        assert torch.equal(a, b)

    style_rows = torch.zeros(VOCAB_SIZE, dtype=torch.bool)
    style_rows[list(STYLE_IDS)] = True
    after = dict(model.named_parameters())
    for name, old in before.items():
        new = after[name].detach()
        if name == "cell.S.romantic":
            assert not torch.equal(new, old), "S_romantic should change"
        elif name in ("emb.weight", "out.weight", "out.bias"):
            assert torch.equal(new[~style_rows], old[~style_rows]), f"{name}: a non-style row moved"
            assert not torch.equal(new[style_rows], old[style_rows]), f"{name}: the style rows should change"
        else:
            assert torch.equal(new, old), f"{name} changed"


def test_styled_corpus():
    tokens = styled_corpus(50, seed=7)
    assert tokens.shape == (50, T_STYLE) and tokens.dtype == torch.long
    captions = decode_batch(tokens)
    assert all(is_styled(c) and c.startswith("the ") for c in captions)
    assert torch.equal(tokens, styled_corpus(50, seed=7))


def test_train_stylenet_smoke():
    g = torch.Generator().manual_seed(0)
    grids = torch.randn(40, 64, 48, generator=g)
    captions = styled_corpus(40, seed=3)  # any captions will do for a smoke test
    model, history = train_stylenet(grids, captions, styled_corpus(30, seed=7), caption_loss, epochs=1, batch_size=16)
    assert len(history.factual_losses) == len(history.styled_losses) == 1
    assert history.cpu_seconds > 0 and not model.training
    assert model.cell.style == "factual" and model.cell.mix is None

    def greedy(m, state, max_len):
        tokens = torch.full((state[0].shape[0],), START, dtype=torch.long)
        out = []
        for _ in range(max_len):
            log_probs, state = m.step(tokens, state)
            tokens = log_probs.argmax(-1)
            out.append(tokens)
        return torch.stack(out, 1)

    captions = style_captions(model, grids[:5], greedy, "romantic")
    assert len(captions) == 5 and model.cell.style == "factual"
