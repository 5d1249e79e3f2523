"""Reference checks for Part 5 (solutions/reinforce.py): the score-function estimator and hard attention."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from shared.training import train
from shared.vocab import END, PAD, START, VOCAB_SIZE
from solutions.attention import AttnCaptioner
from solutions.reinforce import (
    HardAttentionDecoder,
    HardAttentionLoss,
    hard_forward,
    optimal_baseline,
    reinforce_loss,
    sample_location,
    update_baseline,
)


def _six_locations():
    """The lecture's toy problem: logits over 6 locations, rewards with a large shared offset."""
    g = torch.Generator().manual_seed(0)
    theta = torch.randn(6, generator=g, dtype=torch.float64)
    f = torch.randn(6, generator=g, dtype=torch.float64) * 2 - 8
    return theta, f


def _per_sample_gradients(theta, f, baseline, n, seed):
    """Sample n locations with sample_location; minus n times the gradient of reinforce_loss with
    respect to each sample's own copy of theta gives each sample's score-function estimate (n, 6)."""
    thetas = theta.detach().repeat(n, 1).requires_grad_()
    index, log_prob = sample_location(torch.softmax(thetas, -1), torch.Generator().manual_seed(seed))
    loss = reinforce_loss(log_prob, f[index], baseline)
    (grad,) = torch.autograd.grad(loss, thetas)
    return -n * grad, index


def test_reinforce_is_unbiased_and_the_baseline_cuts_variance():
    theta, f = _six_locations()
    p = torch.softmax(theta, 0)
    exact = p * (f - (p * f).sum())  # grad of sum_s p(s) f(s), by enumeration
    b_mean = (p * f).sum().item()
    raw, index_raw = _per_sample_gradients(theta, f, 0.0, 20000, seed=0)
    based, index_based = _per_sample_gradients(theta, f, b_mean, 20000, seed=0)
    assert torch.equal(index_raw, index_based)

    def rel(est):
        return ((est.mean(0) - exact).norm() / exact.norm()).item()

    assert rel(based) < 0.05
    assert rel(raw) < 0.35  # unbiased but noisy (about 0.1 in the lecture)
    # the same samples, with and without the baseline: same mean in expectation (E[grad log p] = 0) ...
    score = F.one_hot(index_raw, 6).double() - p
    assert score.mean(0).norm() < 0.02
    torch.testing.assert_close(raw - based, b_mean * score)
    # ... and far less variance
    assert based.var(0).sum() < 0.2 * raw.var(0).sum()


def test_reinforce_loss_detaches_rewards_and_baseline_and_masks():
    log_probs = torch.randn(3, 4, requires_grad=True)
    rewards = torch.randn(3, 4, requires_grad=True)
    baseline = torch.randn(4, requires_grad=True)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.float32)
    loss = reinforce_loss(log_probs, rewards, baseline, mask)
    expected = -(mask * (rewards - baseline) * log_probs).sum() / mask.sum()
    torch.testing.assert_close(loss, expected)
    loss.backward()
    assert rewards.grad is None and baseline.grad is None
    torch.testing.assert_close(log_probs.grad, -(mask * (rewards - baseline)).detach() / mask.sum())
    torch.testing.assert_close(reinforce_loss(log_probs, rewards), -(rewards * log_probs).mean())


def test_optimal_baseline_closed_form_and_minimum():
    theta, f = _six_locations()
    p = torch.softmax(theta, 0)
    index = torch.multinomial(p, 20000, replacement=True, generator=torch.Generator().manual_seed(0))
    score_sq = ((F.one_hot(index, 6).double() - p) ** 2).sum(1)
    b_opt = optimal_baseline(f[index], score_sq)
    assert isinstance(b_opt, float)
    assert abs(b_opt - ((f[index] * score_sq).mean() / score_sq.mean()).item()) < 1e-12

    def second_moment(b):
        return (((f[index] - b) ** 2) * score_sq).mean().item()

    assert second_moment(b_opt) <= min(
        second_moment(b_opt - 0.1), second_moment(b_opt + 0.1), second_moment((p * f).sum().item())
    )


def test_update_baseline():
    rewards = torch.tensor([[1.0, 2.0, 0.0], [3.0, 4.0, 0.0]])
    first = update_baseline(None, rewards)
    torch.testing.assert_close(first, torch.tensor([2.0, 3.0, 0.0]))
    second = update_baseline(first, torch.zeros(2, 3), momentum=0.9)
    torch.testing.assert_close(second, 0.9 * torch.tensor([2.0, 3.0, 0.0]))
    torch.testing.assert_close(update_baseline(1.0, torch.tensor([3.0, 5.0]), 0.5), torch.tensor(2.5))


def test_sample_location_frequencies_and_determinism():
    w = torch.tensor([0.05, 0.1, 0.15, 0.2, 0.5, 0.0])
    n = 40000
    weights = w.expand(n, 6).clone().requires_grad_()
    index, log_prob = sample_location(weights, torch.Generator().manual_seed(0))
    assert index.dtype == torch.long and index.shape == (n,)
    counts = torch.bincount(index, minlength=6).double()
    assert counts[5] == 0
    expected = n * w[:5].double()
    chi2 = (((counts[:5] - expected) ** 2) / expected).sum().item()
    assert chi2 < 25.0  # 4 degrees of freedom: p about 5e-5
    torch.testing.assert_close(log_prob, w[index].log())
    log_prob.sum().backward()
    torch.testing.assert_close(weights.grad[torch.arange(n), index], 1 / w[index])
    again, _ = sample_location(weights.detach(), torch.Generator().manual_seed(0))
    assert torch.equal(index, again)
    with pytest.raises(ValueError, match="weights"):
        sample_location(torch.tensor([[0.5, -0.1, 0.6]]))


def _data(n=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    features = torch.randn(n, 64, 50, generator=g)
    rows = []
    for _ in range(n):
        k = int(torch.randint(1, 8, (), generator=g))
        rows.append([START] + torch.randint(3, VOCAB_SIZE, (k,), generator=g).tolist() + [END] + [PAD] * (8 - k))
    return features, torch.tensor(rows)


def test_hard_forward_shapes_mix_and_determinism():
    torch.manual_seed(0)
    model = AttnCaptioner()
    features, captions = _data()
    logits, weights, log_probs = hard_forward(model, features, captions, torch.Generator().manual_seed(3))
    assert logits.shape == (8, 9, VOCAB_SIZE) and weights.shape == (8, 9, 64) and log_probs.shape == (8, 9)
    again = hard_forward(model, features, captions, torch.Generator().manual_seed(3))
    assert torch.equal(logits, again[0]) and torch.equal(log_probs, again[2])
    soft_logits, soft_weights = model(features, captions)
    mixed = hard_forward(model, features, captions, torch.Generator().manual_seed(3), mix=1.0)
    torch.testing.assert_close(mixed[0], soft_logits)  # always the expected context: soft attention
    assert not torch.allclose(
        hard_forward(model, features, captions, torch.Generator().manual_seed(3), mix=0.0)[0], soft_logits
    )


def test_hard_training_is_deterministic_and_decodes():
    features, captions = _data(16)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = AttnCaptioner()
        loss = HardAttentionLoss(features, captions, seed=0)
        history = train(model, loss, 16, epochs=2, batch_size=8, lr=3e-3, seed=0)
        assert loss.baseline.shape == (9,)
        runs.append((history.losses, [p.detach().clone() for p in model.parameters()]))
    assert runs[0][0] == runs[1][0]
    assert all(torch.equal(a, b) for a, b in zip(runs[0][1], runs[1][1]))
    decoder = HardAttentionDecoder(model)
    state = decoder.init_state(features[:3])
    log_probs, state = decoder.step(torch.full((3,), START), state)
    assert log_probs.shape == (3, VOCAB_SIZE)
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(3))
