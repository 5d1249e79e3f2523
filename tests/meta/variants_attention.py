"""Part 4 variants."""

from tests.meta.variants import Variant

VARIANTS = [
    # Attention that computes nothing: uniform weights satisfy being a distribution, the mean under equal keys and
    # the invariance to permuted locations; each is anchored to weights that depend on the query.
    Variant(
        "attention",
        "uniform_weights_and_the_mean_of_the_values",
        "    weights = torch.softmax(scores, dim=-1)\n    context = (weights.unsqueeze(1) @ values).squeeze(1)",
        "    weights = torch.full_like(scores, 1.0 / scores.shape[-1])\n    context = values.mean(1)",
        correct=False,
        why="uniform weights and the mean of the values, whatever the query and the keys",
    ),
    Variant(
        "attention",
        "attend_scales_by_d_not_sqrt_d",
        "scores = (keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1])",
        "scores = (keys @ query.unsqueeze(-1)).squeeze(-1) / query.shape[-1]",
        correct=False,
        why="divides the scores by d instead of sqrt(d)",
    ),
    Variant(
        "attention",
        "attend_softmax_over_the_batch",
        "    weights = torch.softmax(scores, dim=-1)\n",
        "    weights = torch.softmax(scores, dim=0)\n",
        correct=False,
        why="normalises over the batch instead of over the L locations",
    ),
    Variant(
        "attention",
        "attend_detaches_the_weights",
        "    weights = torch.softmax(scores, dim=-1)\n",
        "    weights = torch.softmax(scores, dim=-1).detach()\n",
        correct=False,
        why="no gradient flows into the keys and queries: attention cannot learn where to look",
    ),
    Variant(
        "attention",
        "with_coords_rows_and_columns_swapped",
        "    rows = centres.repeat_interleave(grid)                   # (L,) row of each location\n"
        "    cols = centres.repeat(grid)                              # (L,) column of each location\n",
        "    rows = centres.repeat(grid)\n    cols = centres.repeat_interleave(grid)\n",
        correct=False,
        why="repeat vs repeat_interleave mixed up: column-major coordinates",
    ),
    Variant(
        "attention",
        "with_coords_cell_corners_not_centres",
        "    centres = ((torch.arange(grid, dtype=features.dtype, device=features.device) + 0.5) / grid) * 2 - 1",
        "    centres = (torch.arange(grid, dtype=features.dtype, device=features.device) / grid) * 2 - 1",
        correct=False,
        why="forgets the + 0.5: corners of the cells, not their centres",
    ),
    Variant(
        "attention",
        "attention_query_from_the_cell_state",
        "        h, _, features, keys = state\n        return attend(self.Wq(h), keys, features)",
        "        _, c, features, keys = state\n        return attend(self.Wq(c), keys, features)",
        correct=False,
        why="queries with the LSTM's cell state c instead of its hidden state h",
    ),
    Variant(
        "attention",
        "forward_feeds_the_next_word",
        "            step_logits, state = self.advance(captions[:, t], context, state)",
        "            step_logits, state = self.advance(captions[:, t + 1], context, state)",
        correct=False,
        why="teacher forcing off by one: the model is fed the word it must predict",
    ),
    Variant(
        "attention",
        "forward_attends_once_per_caption",
        "        for t in range(captions.shape[1] - 1):\n            context, alpha = self.attention_step(state)\n",
        "        context, alpha = self.attention_step(state)\n        for t in range(captions.shape[1] - 1):\n",
        correct=False,
        why="attends only before the first word and reuses that context at every step",
    ),
    Variant(
        "attention",
        "step_returns_logits_not_log_probs",
        "        return F.log_softmax(logits, -1), state",
        "        return logits, state",
        correct=False,
        why="step returns raw scores: greedy decoding still works, beam scores do not",
    ),
    # Correct alternatives: they must keep full marks.
    Variant(
        "attention",
        "attend_by_einsum_and_a_hand_written_softmax",
        "    scores = (keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1])   # (N, L)\n"
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    context = (weights.unsqueeze(1) @ values).squeeze(1)                               # (N, D)\n",
        "    scores = torch.einsum('nld,nd->nl', keys, query) * query.shape[-1] ** -0.5\n"
        "    e = (scores - scores.max(-1, keepdim=True).values).exp()\n"
        "    weights = e / e.sum(-1, keepdim=True)\n"
        "    context = (weights.unsqueeze(-1) * values).sum(1)\n",
        correct=True,
        why="einsum, a max-shifted exp/sum softmax and a broadcast weighted sum",
    ),
    Variant(
        "attention",
        "with_coords_by_meshgrid_as_in_the_lecture",
        "    centres = ((torch.arange(grid, dtype=features.dtype, device=features.device) + 0.5) / grid) * 2 - 1\n"
        "    rows = centres.repeat_interleave(grid)                   # (L,) row of each location\n"
        "    cols = centres.repeat(grid)                              # (L,) column of each location\n"
        "    coords = torch.stack([rows, cols], -1)                   # (L, 2)\n",
        "    r, c = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing='ij')\n"
        "    coords = ((torch.stack([r.flatten(), c.flatten()], -1).float() + 0.5) / grid * 2 - 1)\n"
        "    coords = coords.to(device=features.device, dtype=features.dtype)\n",
        correct=True,
        why="the lecture's meshgrid, computed in float32 and cast to the features' dtype",
    ),
    Variant(
        "attention",
        "forward_preallocates_and_returns_log_probs_via_step",
        "        state = self.init_state(features)\n"
        "        logits, weights = [], []\n"
        "        for t in range(captions.shape[1] - 1):\n"
        "            context, alpha = self.attention_step(state)\n"
        "            step_logits, state = self.advance(captions[:, t], context, state)\n"
        "            logits.append(step_logits)\n"
        "            weights.append(alpha)\n"
        "        return torch.stack(logits, 1), torch.stack(weights, 1)\n",
        "        N, T = captions.shape\n"
        "        state = self.init_state(features)\n"
        "        logits = torch.zeros(N, T - 1, self.out.out_features, device=features.device)\n"
        "        weights = torch.zeros(N, T - 1, features.shape[1], device=features.device)\n"
        "        for t in range(T - 1):\n"
        "            _, alpha = self.attention_step(state)\n"
        "            weights[:, t] = alpha\n"
        "            logits[:, t], state = self.step(captions[:, t], state)\n"
        "        return logits, weights\n",
        correct=True,
        why="in-place writes into float32 buffers; log-probabilities (from step) as the logits",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "attention",
        "attend_returns_a_list",
        "    return context, weights\n",
        "    return [context, weights]\n",
        correct=False,
        why="returns [context, weights], a list, where the docstring promises a tuple",
    ),
    Variant(
        "attention",
        "forward_returns_a_list",
        "        return torch.stack(logits, 1), torch.stack(weights, 1)",
        "        return [torch.stack(logits, 1), torch.stack(weights, 1)]",
        correct=False,
        why="returns [logits, weights], a list, where the docstring promises a tuple",
    ),
    Variant(
        "attention",
        "step_returns_a_list",
        "        return F.log_softmax(logits, -1), state\n",
        "        return [F.log_softmax(logits, -1), state]\n",
        correct=False,
        why="returns [log_probs, state], a list, where the decoding protocol returns a tuple",
    ),
    Variant(
        "attention",
        "attention_step_returns_a_list",
        "        return attend(self.Wq(h), keys, features)\n",
        "        return list(attend(self.Wq(h), keys, features))\n",
        correct=False,
        why="attention_step returns [context, weights], a list, where the docstring promises a tuple",
    ),
]
