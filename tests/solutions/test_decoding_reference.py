"""Part 2 reference: greedy, beam search against exhaustive search on toy models, and sampling."""

import itertools

import pytest
import torch

from shared.vocab import END, PAD, START
from solutions.decoding import beam_search, greedy_decode, sample_captions


class ToyMarkov:
    """A random model over V tokens where p(next | previous token, step) is a fixed table.
    The state is the step counter, one per batch row. START/PAD never emitted; END emitted freely."""

    def __init__(self, T=3, V=6, seed=0, allow_end=True):
        gen = torch.Generator().manual_seed(seed)
        table = torch.randn(T, V, V, generator=gen, dtype=torch.float64) * 2
        table[:, :, PAD] = float("-inf")
        table[:, :, START] = float("-inf")
        if not allow_end:
            table[:, :, END] = float("-inf")
        self.table = torch.log_softmax(table, -1)
        self.T = T

    def init_state(self, n):
        return (torch.zeros(n, dtype=torch.long),)

    def step(self, tokens, state):
        t = state[0]
        return self.table[t.clamp(max=self.T - 1), tokens], (t + 1,)

    def score(self, seq):
        total, prev = 0.0, START
        for t, w in enumerate(seq):
            if prev == END:
                break
            total += self.table[min(t, self.T - 1), prev, w].item()
            prev = w
        return total


def all_sequences(toy, V, T):
    """Every distinct sequence of length T, PAD after END."""
    seen = set()
    for seq in itertools.product(range(2, V), repeat=T):
        seq = list(seq)
        if END in seq:
            i = seq.index(END)
            seq = seq[: i + 1] + [PAD] * (T - i - 1)
        seen.add(tuple(seq))
    return sorted(seen, key=toy.score, reverse=True)


@pytest.mark.parametrize("seed", range(5))
def test_wide_beam_is_exhaustive_search_and_k1_is_greedy(seed):
    toy, V, T = ToyMarkov(T=3, V=6, seed=seed), 6, 3
    ranked = all_sequences(toy, V, T)
    tokens, scores = beam_search(toy, toy.init_state(1), k=len(ranked) + 3, max_len=T)
    for j, seq in enumerate(ranked):
        assert toy.score(tokens[0, j].tolist()) == pytest.approx(toy.score(seq), abs=1e-9)
        assert scores[0, j].item() == pytest.approx(toy.score(seq), abs=1e-9)
    assert torch.isneginf(scores[0, len(ranked) :]).all(), "missing hypotheses must score -inf"
    b1, _ = beam_search(toy, toy.init_state(4), k=1, max_len=T)
    assert torch.equal(b1[:, 0], greedy_decode(toy, toy.init_state(4), T))


def test_scores_equal_the_recomputed_log_probability_and_pad_follows_end():
    toy = ToyMarkov(T=4, V=7, seed=3)
    tokens, scores = beam_search(toy, toy.init_state(2), k=4, max_len=4)
    for n in range(2):
        for j in range(4):
            seq = tokens[n, j].tolist()
            assert scores[n, j].item() == pytest.approx(toy.score(seq), abs=1e-9)
            if END in seq:
                assert all(t == PAD for t in seq[seq.index(END) + 1 :])
        assert (scores[n, :-1] >= scores[n, 1:]).all()


def test_sampling_is_reproducible_and_follows_the_distribution():
    toy = ToyMarkov(T=1, V=5, seed=1, allow_end=False)
    draws = sample_captions(toy, toy.init_state(20000), 1.0, 1, torch.Generator().manual_seed(0))
    again = sample_captions(toy, toy.init_state(20000), 1.0, 1, torch.Generator().manual_seed(0))
    assert torch.equal(draws, again)
    freq = torch.bincount(draws[:, 0], minlength=5).double() / 20000
    torch.testing.assert_close(freq, toy.table[0, START].exp(), rtol=0, atol=0.015)


def test_decoders_reject_bad_arguments():
    toy = ToyMarkov()
    with pytest.raises(ValueError, match=r"^k: expected a positive int, got 0"):
        beam_search(toy, toy.init_state(1), 0, 3)
    with pytest.raises(ValueError, match=r"^max_len: expected a positive int"):
        greedy_decode(toy, toy.init_state(1), 0)
    with pytest.raises(ValueError, match=r"^temperature: expected a number > 0"):
        sample_captions(toy, toy.init_state(1), 0.0, 3)
    with pytest.raises(TypeError, match=r"^state: expected a non-empty tuple of tensors"):
        greedy_decode(toy, [torch.zeros(1)], 3)
