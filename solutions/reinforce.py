"""Part 5: hard attention and the score-function (REINFORCE) estimator.

Soft attention reads the expected annotation sum_i alpha_i v_i. Hard attention samples one location
s ~ alpha and reads v_s: an unbiased estimate of the soft context, but sampling is not differentiable,
so no gradient reaches the attention weights. The score-function estimator supplies one. For an
expected reward J(theta) = E_{s ~ p_theta}[f(s)],

    grad J = E[f(s) grad log p_theta(s)] = E[(f(s) - b) grad log p_theta(s)]   for any constant b,

because E[grad log p] = 0. Sample, weight each grad log p by its reward, average. A baseline b leaves
the mean unchanged and can cut the variance a lot when every reward shares a large offset, as
log-likelihood rewards do; the variance-minimising constant is b* = E[f ||g||^2] / E[||g||^2].

You write four small functions:
  1. sample_location: draw s ~ alpha per row, with a differentiable log alpha_s.
  2. reinforce_loss: the surrogate loss whose gradient is minus the score-function estimate.
  3. optimal_baseline: b* from samples.
  4. update_baseline: the moving-average baseline Xu et al. use.
The hard-attention training around them (given) works with any model that has Part 4's
init_state, attention_step and advance: hard_forward samples a location per word, HardAttentionLoss
adds the REINFORCE term with reward log p(correct word) to the word loss, and HardAttentionDecoder
decodes with the argmax location.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from shared.vocab import PAD


def sample_location(weights: torch.Tensor, generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample one location per row from a categorical distribution.

    Args:
        weights: (N, L) non-negative, each row a distribution over L locations (rows sum to 1).
        generator: a torch.Generator on weights' device (None: torch's global generator).
    Returns:
        index: LongTensor (N,), index[n] drawn with probability weights[n, index[n]].
        log_prob: (N,) = log(weights[n, index[n]]), differentiable with respect to weights, with a finite gradient
            at every entry, also where a weight is exactly 0 (a location that cannot be drawn: its gradient is 0).
    Any exact sampler is correct (torch.multinomial, inverse CDF, Gumbel-max); the same generator
    state must give the same indices.
    """
    if not isinstance(weights, torch.Tensor) or weights.dim() != 2:
        raise ValueError(f"weights: expected a 2-d tensor (N, L), got {getattr(weights, 'shape', type(weights))}")
    if (weights < 0).any():
        raise ValueError("weights: expected non-negative entries (each row a distribution), got negative ones")
    ### BEGIN SOLUTION
    index = torch.multinomial(weights.detach(), 1, generator=generator).squeeze(1)
    log_prob = weights.gather(1, index.unsqueeze(1)).squeeze(1).log()
    return index, log_prob
    ### END SOLUTION


def reinforce_loss(log_probs: torch.Tensor, rewards: torch.Tensor, baseline: float | torch.Tensor = 0.0,
                   mask: torch.Tensor | None = None) -> torch.Tensor:
    """The REINFORCE surrogate loss.

    Args:
        log_probs: (...) log-probabilities of the sampled choices (carry the gradient), e.g. (N,) or (N, T).
        rewards: same shape, the reward of each sample; treated as a constant.
        baseline: a float, or a tensor broadcastable to rewards (e.g. (T,), one value per step);
            treated as a constant.
        mask: same shape as rewards, 1 where a sample counts and 0 where it does not (e.g. PAD
            targets), or None for all ones.
    Returns:
        A scalar: -sum(mask * (rewards - baseline) * log_probs) / sum(mask). No gradient flows into
        rewards or baseline, so its gradient is minus the score-function estimate of grad E[reward].
    """
    if log_probs.shape != rewards.shape:
        raise ValueError(f"rewards: expected the shape of log_probs {tuple(log_probs.shape)}, "
                         f"got {tuple(rewards.shape)}")
    if mask is not None and mask.shape != rewards.shape:
        raise ValueError(f"mask: expected the shape of rewards {tuple(rewards.shape)}, got {tuple(mask.shape)}")
    ### BEGIN SOLUTION
    if isinstance(baseline, torch.Tensor):
        baseline = baseline.detach()
    advantage = rewards.detach() - baseline
    if mask is None:
        mask = torch.ones_like(log_probs)
    mask = mask.to(log_probs.dtype)
    return -(mask * advantage * log_probs).sum() / mask.sum()
    ### END SOLUTION


def optimal_baseline(rewards: torch.Tensor, score_norms_sq: torch.Tensor) -> float:
    """The variance-minimising constant baseline, estimated from samples.

    Args:
        rewards: (S,) reward f(s) of each sample.
        score_norms_sq: (S,) squared norm ||grad log p(s)||^2 of each sample's score.
    Returns:
        b* = mean(f ||g||^2) / mean(||g||^2), a Python float.
    """
    if rewards.dim() != 1 or rewards.shape != score_norms_sq.shape:
        raise ValueError(f"score_norms_sq: expected two 1-d tensors of the same length, got rewards "
                         f"{tuple(rewards.shape)} and score_norms_sq {tuple(score_norms_sq.shape)}")
    ### BEGIN SOLUTION
    return ((rewards * score_norms_sq).mean() / score_norms_sq.mean()).item()
    ### END SOLUTION


def update_baseline(baseline: torch.Tensor | float | None, rewards: torch.Tensor,
                    momentum: float = 0.9) -> torch.Tensor:
    """One update of a moving-average baseline.

    Args:
        baseline: the running baseline (a tensor of shape rewards.shape[1:], or a float), or None
            before the first batch.
        rewards: (N,) or (N, T) rewards of a batch; for (N, T) there is one baseline value per step.
        momentum: weight of the old baseline, in [0, 1].
    Returns:
        momentum * baseline + (1 - momentum) * rewards.mean(0), or rewards.mean(0) when baseline is None;
        a tensor of shape rewards.shape[1:] carrying no gradient.
    """
    if not 0.0 <= momentum <= 1.0:
        raise ValueError(f"momentum: expected a number in [0, 1], got {momentum!r}")
    ### BEGIN SOLUTION
    mean = rewards.detach().mean(0)
    if baseline is None:
        return mean
    return momentum * baseline + (1 - momentum) * mean
    ### END SOLUTION


# ----------------------------------------------------------------------------------------------
# Given: hard-attention training and decoding around the functions above.
# ----------------------------------------------------------------------------------------------

def hard_forward(model: nn.Module, features: torch.Tensor, captions: torch.Tensor,
                 generator: torch.Generator | None = None, mix: float = 0.5):
    """Teacher forcing with hard attention: one sampled location per word.

    Args:
        model: a Part 4 captioner: init_state(features) -> (h, c, features, keys);
            attention_step(state) -> (context (N, D), weights (N, L)); advance(tokens, context, state).
        features: (N, L, D) annotation grids.
        captions: (N, T) long; the inputs are captions[:, :-1].
        generator: a torch.Generator on features' device for every random draw (None: the global one).
        mix: probability, per step and for the whole batch, of reading the expected (soft) context
            instead of the sampled annotation (Xu et al.'s variance reduction); 0 is pure hard attention.
    Returns:
        logits: (N, T-1, V) scores for the next words.
        weights: (N, T-1, L) attention distribution at each step.
        log_probs: (N, T-1) log-probability of the location sampled at each step (differentiable).
    """
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"mix: expected a probability in [0, 1], got {mix!r}")
    if generator is not None and generator.device.type != features.device.type:
        raise ValueError(f"generator: expected a generator on {features.device.type}, got one on "
                         f"{generator.device.type}")
    state = model.init_state(features)
    annotations = state[2]
    rows = torch.arange(annotations.shape[0], device=annotations.device)
    # one draw per step, all before the first sample: whether that step reads the expected context
    reads_soft = torch.rand(captions.shape[1] - 1, generator=generator, device=features.device) < mix
    per_step = []   # (logits (N, V), weights (N, L), log-probability (N,)) of each input word
    for words, soft in zip(captions[:, :-1].unbind(1), reads_soft.tolist()):
        expected_context, alpha = model.attention_step(state)
        index, log_prob = sample_location(alpha, generator)
        read = expected_context if soft else annotations[rows, index]   # hard: the sampled location's annotation
        word_logits, state = model.advance(words, read, state)
        per_step.append((word_logits, alpha, log_prob))
    logits, weights, log_probs = (torch.stack(column, 1) for column in zip(*per_step))
    return logits, weights, log_probs


class HardAttentionLoss:
    """loss_fn(model, idx) for shared.training.train: word loss + lam * REINFORCE term.

    Args:
        features: (N_train, L, D) annotation grids of the training split.
        captions: (N_train, T) long training captions.
        lam: weight of the REINFORCE term (the lecture uses 0.3).
        mix: probability of the expected context per step (see hard_forward).
        momentum: of the per-step moving-average baseline.
        seed: seeds a torch.Generator on features' device that drives every sample, so training is
            deterministic for a given seed; pass generator to supply one instead.
    For a batch, with nll_t = -log p(correct word t) under teacher forcing and a sampled location:
        word loss = mean of nll_t over non-PAD targets;
        reward r_t = -nll_t (0 at PAD targets), detached; baseline b_t = update_baseline(b, r);
        the advantage r_t - b_t is divided by its standard deviation over the batch (+ 1e-6);
        REINFORCE term = reinforce_loss(log p(s_t), r / std, b / std, mask of non-PAD targets).
    The running baseline is kept in self.baseline ((T-1,), None before the first batch).
    """

    def __init__(self, features: torch.Tensor, captions: torch.Tensor, lam: float = 0.3, mix: float = 0.5,
                 momentum: float = 0.9, seed: int = 0, generator: torch.Generator | None = None):
        if features.dim() != 3 or captions.dim() != 2 or features.shape[0] != captions.shape[0]:
            raise ValueError(f"captions: expected features (N, L, D) and captions (N, T) with the same N, got "
                             f"{tuple(features.shape)} and {tuple(captions.shape)}")
        self.features, self.captions = features, captions
        self.lam, self.mix, self.momentum = lam, mix, momentum
        self.generator = generator if generator is not None else \
            torch.Generator(device=features.device).manual_seed(seed)
        self.baseline = None

    def __call__(self, model: nn.Module, idx: torch.Tensor) -> torch.Tensor:
        """idx: (B,) long batch indices -> the scalar loss of that batch (updates self.baseline)."""
        captions = self.captions[idx]
        logits, _, log_probs = hard_forward(model, self.features[idx], captions, self.generator, self.mix)
        targets = captions[:, 1:]
        mask = (targets != PAD).to(logits.dtype)
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD,
                              reduction="none").reshape(targets.shape)
        word_loss = (nll * mask).sum() / mask.sum()
        rewards = -(nll * mask).detach()                        # log p(correct word) after looking at s_t
        self.baseline = update_baseline(self.baseline, rewards, self.momentum)
        scale = (rewards - self.baseline).std() + 1e-6          # normalise the advantage
        reinforce = reinforce_loss(log_probs, rewards / scale, self.baseline / scale, mask)
        return word_loss + self.lam * reinforce


class HardAttentionDecoder:
    """The decoding protocol for a hard-attention model: at test time, read the argmax location.

    Args:
        model: a Part 4 captioner (init_state, attention_step, advance), trained with HardAttentionLoss.
    """

    def __init__(self, model: nn.Module):
        self.model = model

    def init_state(self, features: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """features (N, L, D) -> the model's state (h, c, features, keys)."""
        return self.model.init_state(features)

    def step(self, tokens: torch.Tensor, state: tuple[torch.Tensor, ...]):
        """tokens (N,) long -> (log_probs (N, V), state), reading the annotation of highest weight."""
        _, alpha = self.model.attention_step(state)
        annotations = state[2]
        rows = torch.arange(annotations.shape[0], device=annotations.device)
        logits, state = self.model.advance(tokens, annotations[rows, alpha.argmax(-1)], state)
        return F.log_softmax(logits, -1), state
