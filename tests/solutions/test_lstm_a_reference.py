"""The Part 6 reference: schedules, the LSTM-A model's state, and agreement between forward and step."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from shared.vocab import END, PAD, START, VOCAB_SIZE
from solutions.lstm_a import LSTMA, VARIANTS, schedule

EXPECTED = {  # variant -> (prefix, per_step) in terms of "image" / "attr"
    "LSTM": (["image"], None),
    "A1": (["attr"], None),
    "A2": (["image", "attr"], None),
    "A3": (["attr", "image"], None),
    "A4": (["attr"], "image"),
    "A5": (["image"], "attr"),
}


def _inputs(n=3, E=5):
    g = torch.Generator().manual_seed(0)
    return {"image": torch.randn(n, E, generator=g), "attr": torch.randn(n, E, generator=g)}


def test_variants_constant():
    assert VARIANTS == ("LSTM", "A1", "A2", "A3", "A4", "A5")
    assert set(EXPECTED) == set(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_schedule_order_and_per_step(variant):
    x = _inputs()
    copies = {k: v.clone() for k, v in x.items()}
    prefix, per_step = schedule(variant, x["image"], x["attr"])
    want_prefix, want_per_step = EXPECTED[variant]
    assert isinstance(prefix, list) and len(prefix) == len(want_prefix)
    for got, name in zip(prefix, want_prefix):
        assert got is x[name]
    if want_per_step is None:
        assert per_step is None
    else:
        assert per_step is x[want_per_step]
    for k in x:  # inputs untouched
        assert torch.equal(x[k], copies[k])


@pytest.mark.parametrize("bad", ["A6", "lstm", "", None, "A 1"])
def test_schedule_unknown_variant(bad):
    x = _inputs()
    with pytest.raises(ValueError, match="variant") as info:
        schedule(bad, x["image"], x["attr"])
    assert repr(bad) in str(info.value) and "A5" in str(info.value)


def test_model_unknown_variant():
    with pytest.raises(ValueError, match="A7"):
        LSTMA("A7")


def test_gate_biases():
    m = LSTMA("A3")
    H = m.H
    b = m.cell.bias_ih.detach()
    assert torch.all(b[:H] == 2) and torch.all(b[H : 2 * H] == 3) and torch.all(b[2 * H : 3 * H] == 0)
    assert torch.all(b[3 * H :] == 2) and torch.all(m.cell.bias_hh == 0)


def _batch(n=4, T=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    grids = torch.randn(n, 64, 48, generator=g)
    attrs = torch.rand(n, 7, generator=g)
    caps = torch.randint(3, VOCAB_SIZE, (n, T), generator=g)
    caps[:, 0] = START
    caps[:, -2], caps[:, -1] = END, PAD
    return grids, attrs, caps


@pytest.mark.parametrize("variant", VARIANTS)
def test_init_state_runs_the_prefix(variant):
    torch.manual_seed(0)
    m = LSTMA(variant)
    grids, attrs, _ = _batch()
    with torch.no_grad():
        h, c, per_step = m.init_state(grids, attrs)
        vi, a = m.Tv(m.image_vector(grids)), m.Ta(attrs)
        named = {"image": vi, "attr": a}
        want_prefix, want_per_step = EXPECTED[variant]
        hh = torch.zeros(4, m.H)
        cc = torch.zeros(4, m.H)
        for name in want_prefix:
            hh, cc = m.cell(named[name], (hh, cc))
        want = torch.zeros(4, m.E) if want_per_step is None else named[want_per_step]
    assert h.shape == c.shape == (4, m.H) and per_step.shape == (4, m.E)
    torch.testing.assert_close(h, hh)
    torch.testing.assert_close(c, cc)
    torch.testing.assert_close(per_step, want)


@pytest.mark.parametrize("variant", ["LSTM", "A3", "A4", "A5"])
def test_forward_agrees_with_step(variant):
    torch.manual_seed(1)
    m = LSTMA(variant)
    grids, attrs, caps = _batch()
    copies = (grids.clone(), attrs.clone(), caps.clone())
    with torch.no_grad():
        logits = m(grids, attrs, caps)
        assert logits.shape == (4, caps.shape[1] - 1, VOCAB_SIZE)
        state = m.init_state(grids, attrs)
        for t in range(caps.shape[1] - 1):
            log_probs, state = m.step(caps[:, t], state)
            assert len(state) == 3 and all(s.shape[0] == 4 for s in state)
            torch.testing.assert_close(log_probs, F.log_softmax(logits[:, t], -1), rtol=1e-5, atol=1e-5)
    for a, b in zip((grids, attrs, caps), copies):
        assert torch.equal(a, b)


def test_a1_ignores_the_image():
    torch.manual_seed(2)
    m = LSTMA("A1")
    grids, attrs, caps = _batch()
    with torch.no_grad():
        torch.testing.assert_close(m(grids, attrs, caps), m(torch.zeros_like(grids), attrs, caps))
