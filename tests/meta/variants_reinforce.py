"""Part 5 variants."""

from tests.meta.variants import Variant

_SAMPLE = (
    "    index = torch.multinomial(weights.detach(), 1, generator=generator).squeeze(1)\n"
    "    log_prob = weights.gather(1, index.unsqueeze(1)).squeeze(1).log()\n"
)

VARIANTS = [
    # -- realistic bugs ------------------------------------------------------------------------------
    Variant(
        "reinforce",
        "sampler_ignores_the_generator",
        "torch.multinomial(weights.detach(), 1, generator=generator)",
        "torch.multinomial(weights.detach(), 1)",
        correct=False,
        why="draws from torch's global generator: the same generator state gives other indices",
    ),
    Variant(
        "reinforce",
        "sampler_takes_the_argmax",
        "index = torch.multinomial(weights.detach(), 1, generator=generator).squeeze(1)",
        "index = weights.detach().argmax(-1)",
        correct=False,
        why="reads the most likely location instead of sampling one",
    ),
    Variant(
        "reinforce",
        "log_prob_is_detached",
        "log_prob = weights.gather(1, index.unsqueeze(1)).squeeze(1).log()",
        "log_prob = weights.detach().gather(1, index.unsqueeze(1)).squeeze(1).log()",
        correct=False,
        why="no gradient reaches the attention weights through log_prob",
    ),
    Variant(
        "reinforce",
        "log_prob_from_the_log_of_every_weight",
        "    log_prob = weights.gather(1, index.unsqueeze(1)).squeeze(1).log()",
        "    log_prob = weights.log().gather(1, index.unsqueeze(1)).squeeze(1)",
        correct=False,
        why="right values, but the gradient is NaN wherever a weight is exactly zero",
    ),
    Variant(
        "reinforce",
        "log_prob_treats_weights_as_logits",
        "log_prob = weights.gather(1, index.unsqueeze(1)).squeeze(1).log()",
        "log_prob = torch.log_softmax(weights, -1).gather(1, index.unsqueeze(1)).squeeze(1)",
        correct=False,
        why="applies log_softmax to weights that are already probabilities",
    ),
    Variant(
        "reinforce",
        "loss_has_the_wrong_sign",
        "    return -(mask * advantage * log_probs).sum() / mask.sum()",
        "    return (mask * advantage * log_probs).sum() / mask.sum()",
        correct=False,
        why="ascends the loss: the gradient is plus the score-function estimate",
    ),
    Variant(
        "reinforce",
        "loss_adds_the_baseline",
        "advantage = rewards.detach() - baseline",
        "advantage = rewards.detach() + baseline",
        correct=False,
        why="adds the baseline: still unbiased, but the wrong value and more variance, not less",
    ),
    Variant(
        "reinforce",
        "loss_ignores_the_baseline",
        "advantage = rewards.detach() - baseline",
        "advantage = rewards.detach()",
        correct=False,
        why="never subtracts the baseline: still unbiased, but the wrong value and no variance cut",
    ),
    Variant(
        "reinforce",
        "loss_lets_gradients_into_rewards_and_baseline",
        "    if isinstance(baseline, torch.Tensor):\n        baseline = baseline.detach()\n"
        "    advantage = rewards.detach() - baseline",
        "    advantage = rewards - baseline",
        correct=False,
        why="rewards and baseline are not treated as constants",
    ),
    Variant(
        "reinforce",
        "loss_averages_over_masked_entries_too",
        "    return -(mask * advantage * log_probs).sum() / mask.sum()",
        "    return -(mask * advantage * log_probs).sum() / mask.numel()",
        correct=False,
        why="divides by every entry, PAD positions included",
    ),
    Variant(
        "reinforce",
        "optimal_baseline_is_the_mean_reward",
        "    return ((rewards * score_norms_sq).mean() / score_norms_sq.mean()).item()",
        "    return rewards.mean().item()",
        correct=False,
        why="returns E[f], not the variance-minimising E[f ||g||^2] / E[||g||^2]",
    ),
    Variant(
        "reinforce",
        "update_baseline_swaps_the_momentum",
        "    return momentum * baseline + (1 - momentum) * mean",
        "    return (1 - momentum) * baseline + momentum * mean",
        correct=False,
        why="weights the new batch mean by momentum and the old baseline by 1 - momentum",
    ),
    Variant(
        "reinforce",
        "update_baseline_one_mean_for_all_steps",
        "    mean = rewards.detach().mean(0)",
        "    mean = rewards.detach().mean()",
        correct=False,
        why="(N, T) rewards get one mean over every step instead of one per step",
    ),
    # -- correct alternatives -------------------------------------------------------------------------
    Variant(
        "reinforce",
        "gumbel_max_sampler",
        _SAMPLE,
        "    u = torch.rand(weights.shape, generator=generator, dtype=torch.float64, device=weights.device)\n"
        "    gumbel = -torch.log(-torch.log(u.clamp_min(1e-300)))\n"
        "    index = (weights.detach().double().log() + gumbel).argmax(-1)\n"
        "    log_prob = torch.log(weights[torch.arange(weights.shape[0], device=weights.device), index])\n",
        correct=True,
        why="Gumbel-max: an exact sampler that draws differently from the reference",
    ),
    Variant(
        "reinforce",
        "inverse_cdf_sampler_with_categorical_log_prob",
        _SAMPLE,
        "    cdf = weights.detach().cumsum(-1)\n"
        "    u = torch.rand(weights.shape[0], 1, generator=generator, device=weights.device, dtype=cdf.dtype)\n"
        "    index = (cdf <= u * cdf[:, -1:]).sum(-1).clamp(max=weights.shape[1] - 1)\n"
        "    log_prob = torch.distributions.Categorical(probs=weights).log_prob(index)\n",
        correct=True,
        why="inverse CDF; Categorical normalises the weights, which changes the gradient only "
        "along the all-ones direction",
    ),
    Variant(
        "reinforce",
        "loss_and_baselines_written_differently",
        "    if isinstance(baseline, torch.Tensor):\n        baseline = baseline.detach()\n"
        "    advantage = rewards.detach() - baseline\n"
        "    if mask is None:\n        mask = torch.ones_like(log_probs)\n"
        "    mask = mask.to(log_probs.dtype)\n"
        "    return -(mask * advantage * log_probs).sum() / mask.sum()\n",
        "    with torch.no_grad():\n"
        "        advantage = torch.as_tensor(rewards - baseline, dtype=torch.float64)\n"
        "    if mask is None:\n"
        "        return -(advantage * log_probs.double()).mean().to(log_probs.dtype)\n"
        "    weight = torch.where(mask.bool(), advantage, torch.zeros_like(advantage))\n"
        "    return -(weight * log_probs).sum().float() / mask.bool().sum()\n",
        correct=True,
        why="float64 advantage under no_grad, torch.where masking, mean when unmasked",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "reinforce",
        "sample_location_returns_a_list",
        "    return index, log_prob\n",
        "    return [index, log_prob]\n",
        correct=False,
        why="returns [index, log_prob], a list, where the docstring promises a tuple",
    ),
    Variant(
        "reinforce",
        "optimal_baseline_returns_a_tensor",
        "score_norms_sq.mean()).item()",
        "score_norms_sq.mean())",
        correct=False,
        why="returns a 0-d tensor where the docstring promises a Python float",
    ),
]
