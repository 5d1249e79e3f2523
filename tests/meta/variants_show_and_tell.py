"""Part 1 variants."""

from tests.meta.variants import Variant

_LOSS = (
    "    targets = captions[:, 1:]\n"
    "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)\n"
)

VARIANTS = [
    # A model that computes nothing: its step-by-step decoding equals its teacher forcing, both the output bias. The
    # identity is anchored to logits that move with the words fed in and with the image.
    Variant(
        "show_and_tell",
        "logits_are_the_output_bias",
        "        self.out = nn.Linear(H, n_vocab)\n        self.H = H\n",
        "        self.out = nn.Linear(H, n_vocab)\n"
        "        self.out.forward = lambda h: self.out.bias.expand(*h.shape[:-1], -1)\n        self.H = H\n",
        correct=False,
        why="step and forward return the output bias, whatever the words, the state and the image",
    ),
    Variant(
        "show_and_tell",
        "log_probs_and_retrieval_are_constant_zero",
        "    ### BEGIN SOLUTION\n    log_probs = model(features, captions).log_softmax(-1)\n",
        "    return torch.zeros(captions.shape[0], dtype=features.dtype)\n"
        "    ### BEGIN SOLUTION\n    log_probs = model(features, captions).log_softmax(-1)\n",
        correct=False,
        why="caption_log_probs is 0 for every pair, and retrieval_scores pairs those zeros: "
        "consistent with each other, right about nothing",
    ),
    Variant(
        "show_and_tell",
        "loss_is_a_constant_zero",
        _LOSS,
        "    return logits.sum() * 0.0\n",
        correct=False,
        why="a zero loss (with a graph) satisfies every padding property and trains nothing",
    ),
    Variant(
        "show_and_tell",
        "recurrence_weights_not_transposed",
        "h_prev @ W_hh.T",
        "h_prev @ W_hh",
        correct=False,
        why="h_prev W_hh instead of h_prev W_hh^T: right shapes, wrong recurrence",
    ),
    Variant(
        "show_and_tell",
        "loss_averages_over_padding_too",
        ", ignore_index=PAD)",
        ")",
        correct=False,
        why="PAD targets count in the mean: the model is trained to predict padding",
    ),
    Variant(
        "show_and_tell",
        "loss_masks_by_the_inputs",
        _LOSS,
        "    targets = captions[:, 1:]\n"
        "    mask = (captions[:, :-1] != PAD).float()\n"
        "    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction='none')\n"
        "    return (nll * mask.reshape(-1)).sum() / mask.sum()\n",
        correct=False,
        why="masks positions whose input is PAD, so the PAD right after END is still scored",
    ),
    Variant(
        "show_and_tell",
        "loss_is_a_mean_of_per_caption_means",
        _LOSS,
        "    targets = captions[:, 1:]\n"
        "    mask = (targets != PAD).float()\n"
        "    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction='none')\n"
        "    return ((nll * mask).sum(1) / mask.sum(1)).mean()\n",
        correct=False,
        why="averages each caption first: short captions weigh more than the contract's mean",
    ),
    Variant(
        "show_and_tell",
        "image_at_every_step",
        "image_term if t == 0 else None)",
        "image_term)",
        correct=False,
        why="forward adds W_ih v at every step instead of only the first",
    ),
    Variant(
        "show_and_tell",
        "image_at_the_second_step",
        "image_term if t == 0 else None)",
        "image_term if t == 1 else None)",
        correct=False,
        why="the lecture's indexing warning: the image enters with the first word, not with START",
    ),
    Variant(
        "show_and_tell",
        "step_keeps_the_image_term",
        "(h, torch.zeros_like(image_term))",
        "(h, image_term)",
        correct=False,
        why="step hands the image term on, so decoding adds the image again at every step",
    ),
    Variant(
        "show_and_tell",
        "step_returns_logits",
        "return F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))",
        "return self.out(h), (h, torch.zeros_like(image_term))",
        correct=False,
        why="step returns unnormalised scores where the decoding protocol wants log-probabilities",
    ),
    Variant(
        "show_and_tell",
        "forward_feeds_the_targets",
        "W_xh, W_hh, b = self.W_xh.weight, self.W_hh.weight, self.W_xh.bias\n        x = self.emb(captions[:, :-1])",
        "W_xh, W_hh, b = self.W_xh.weight, self.W_hh.weight, self.W_xh.bias\n        x = self.emb(captions[:, 1:])",
        correct=False,
        why="off by one: the inputs are captions[:, 1:], so each step sees the word it must predict",
    ),
    Variant(
        "show_and_tell",
        "relu_step_by_linear_and_clamp",
        "    pre = x @ W_xh.T + h_prev @ W_hh.T + b\n    if image_term is not None:\n        pre = pre + image_term\n"
        "    return torch.relu(pre)\n",
        "    pre = F.linear(x, W_xh, b)\n    pre += F.linear(h_prev, W_hh)\n    if image_term is not None:\n"
        "        pre += image_term\n    return pre.clamp_(min=0)\n",
        correct=True,
        why="F.linear, in-place accumulation on a fresh tensor and clamp instead of relu",
    ),
    Variant(
        "show_and_tell",
        "loss_by_gather_and_boolean_mask",
        _LOSS,
        "    targets = captions[:, 1:]\n"
        "    nll = -logits.log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)\n"
        "    return nll[targets != PAD].mean()\n",
        correct=True,
        why="log_softmax, gather and a boolean mask instead of F.cross_entropy's ignore_index",
    ),
    Variant(
        "show_and_tell",
        "forward_built_on_step",
        "        h, image_term = self.init_state(features)\n"
        "        W_xh, W_hh, b = self.W_xh.weight, self.W_hh.weight, self.W_xh.bias\n"
        "        x = self.emb(captions[:, :-1])\n"
        "        hs = []\n"
        "        for t in range(x.shape[1]):\n"
        "            h = relu_rnn_step(x[:, t], h, W_xh, W_hh, b, image_term if t == 0 else None)\n"
        "            hs.append(h)\n"
        "        return self.out(torch.stack(hs, 1))\n",
        "        state = self.init_state(features)\n"
        "        scores = []\n"
        "        for t in range(captions.shape[1] - 1):\n"
        "            log_probs, state = self.step(captions[:, t], state)\n"
        "            scores.append(log_probs)\n"
        "        return torch.stack(scores, 1)\n",
        correct=True,
        why="teacher forcing through step: returns log-probabilities, logits up to a constant per "
        "position, which caption_loss and every softmax treat identically",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "show_and_tell",
        "loss_returns_a_one_element_vector",
        "targets.reshape(-1), ignore_index=PAD)\n    ### END SOLUTION",
        "targets.reshape(-1), ignore_index=PAD).reshape(1)\n    ### END SOLUTION",
        correct=False,
        why="returns the loss as a (1,) tensor where the docstring promises a scalar tensor (shape ())",
    ),
    Variant(
        "show_and_tell",
        "init_state_returns_a_list",
        "return h, self.W_ih(self.image_vector(features))",
        "return [h, self.W_ih(self.image_vector(features))]",
        correct=False,
        why="returns the state as a list: the kit's decoders refuse a state that is not a tuple",
    ),
    Variant(
        "show_and_tell",
        "step_returns_the_state_as_a_list",
        "(h, torch.zeros_like(image_term))",
        "[h, torch.zeros_like(image_term)]",
        correct=False,
        why="returns the new state as a list where the docstring promises a tuple (h, zeros)",
    ),
    Variant(
        "show_and_tell",
        "step_returns_a_list",
        "        return F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))",
        "        return [F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))]",
        correct=False,
        why="returns [log_probs, state], a list, where the decoding protocol returns a tuple",
    ),
    # Retrieval and the image controls.
    Variant(
        "show_and_tell",
        "log_probs_score_start",
        "    targets = captions[:, 1:]\n    picked = log_probs.gather(-1, targets.unsqueeze(-1))",
        "    targets = captions[:, :-1]\n    picked = log_probs.gather(-1, targets.unsqueeze(-1))",
        correct=False,
        why="scores START and every input word with its own position's logits instead of the next word",
    ),
    Variant(
        "show_and_tell",
        "log_probs_score_padding",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1)",
        "    return picked.sum(1)",
        correct=False,
        why="PAD after END is scored: longer padding lowers a caption's log-probability",
    ),
    Variant(
        "show_and_tell",
        "log_probs_skip_end",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1)",
        "    return picked.masked_fill((targets == PAD) | (targets == END), 0.0).sum(1)",
        correct=False,
        why="END is not scored: a caption that should have stopped earlier is not penalised",
    ),
    Variant(
        "show_and_tell",
        "log_probs_average_the_words",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1)",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1) / (targets != PAD).sum(1)",
        correct=False,
        why="a mean per word instead of the caption's log-probability",
    ),
    Variant(
        "show_and_tell",
        "retrieval_scores_pair_by_pair",
        "        rows.append(caption_log_probs(model, pair_features, pair_captions).reshape(chunk.shape[0], n_captions))",
        "        rows.append(torch.stack([caption_log_probs(model, pair_features[m:m + 1], pair_captions[m:m + 1])[0]\n"
        "                                 for m in range(pair_features.shape[0])]).reshape(chunk.shape[0], n_captions))",
        correct=False,
        why="runs the model once per pair: right values, 40,000 calls for the graded 200 x 200 pairs "
        "(the docstring allows 1,000)",
    ),
    Variant(
        "show_and_tell",
        "retrieval_scores_transposed",
        "        pair_features = chunk.repeat_interleave(n_captions, 0)\n"
        "        pair_captions = captions.repeat(chunk.shape[0], 1)",
        "        pair_features = chunk.repeat(n_captions, 1, 1)\n"
        "        pair_captions = captions.repeat_interleave(chunk.shape[0], 0)",
        correct=False,
        why="pairs caption-major but reshapes image-major: entries land on the wrong (image, caption)",
    ),
    Variant(
        "show_and_tell",
        "retrieval_scores_all_pairs_at_once",
        "    n_images, n_captions = features.shape[0], captions.shape[0]\n"
        "    images_per_batch = max(1, batch_size // max(1, n_captions))\n"
        "    rows = []\n"
        "    for start in range(0, n_images, images_per_batch):\n"
        "        chunk = features[start:start + images_per_batch]\n"
        "        pair_features = chunk.repeat_interleave(n_captions, 0)\n"
        "        pair_captions = captions.repeat(chunk.shape[0], 1)\n"
        "        rows.append(caption_log_probs(model, pair_features, pair_captions).reshape(chunk.shape[0], n_captions))\n"
        "    return torch.cat(rows, 0)\n",
        "    n_images, n_captions = features.shape[0], captions.shape[0]\n"
        "    pair_features = features[:, None].expand(-1, n_captions, *features.shape[1:]).flatten(0, 1)\n"
        "    pair_captions = captions[None].expand(n_images, -1, -1).flatten(0, 1)\n"
        "    return caption_log_probs(model, pair_features, pair_captions).view(n_images, n_captions)\n",
        correct=True,
        why="loop-free: every pair in one call by expand and flatten (ignores the memory bound)",
    ),
    Variant(
        "show_and_tell",
        "retrieval_scores_one_image_per_call",
        "    n_images, n_captions = features.shape[0], captions.shape[0]\n"
        "    images_per_batch = max(1, batch_size // max(1, n_captions))\n"
        "    rows = []\n"
        "    for start in range(0, n_images, images_per_batch):\n"
        "        chunk = features[start:start + images_per_batch]\n"
        "        pair_features = chunk.repeat_interleave(n_captions, 0)\n"
        "        pair_captions = captions.repeat(chunk.shape[0], 1)\n"
        "        rows.append(caption_log_probs(model, pair_features, pair_captions).reshape(chunk.shape[0], n_captions))\n"
        "    return torch.cat(rows, 0)\n",
        "    rows = [caption_log_probs(model, image.expand(captions.shape[0], *image.shape), captions)\n"
        "            for image in features]\n"
        "    return torch.stack(rows)\n",
        correct=True,
        why="one image with every caption per call: C pairs a call, I calls (200 for the graded retrieval)",
    ),
    Variant(
        "show_and_tell",
        "recall_ties_in_favour",
        "    ranks = (scores >= scores.diagonal().unsqueeze(0)).sum(0)",
        "    ranks = (scores > scores.diagonal().unsqueeze(0)).sum(0) + 1",
        correct=False,
        why="an image scoring exactly as well as the true one ranks behind it: ties flatter the model",
    ),
    Variant(
        "show_and_tell",
        "recall_off_by_one_k",
        "    return (ranks <= k).double().mean().item()",
        "    return (ranks < k).double().mean().item()",
        correct=False,
        why="rank < k: recall@1 is always 0, recall@k is recall@(k-1)",
    ),
    Variant(
        "show_and_tell",
        "recall_ranks_captions_per_image",
        "    ranks = (scores >= scores.diagonal().unsqueeze(0)).sum(0)",
        "    ranks = (scores >= scores.diagonal().unsqueeze(1)).sum(1)",
        correct=False,
        why="ranks the captions of each image (rows) where the lecture ranks the images of each caption",
    ),
    Variant(
        "show_and_tell",
        "recall_accepts_any_k",
        "    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n:\n"
        '        raise ValueError(f"k: expected an int in 1..{n}, got {k!r}")\n',
        "",
        correct=False,
        why="k = 0 or k > N gives a number instead of an error",
    ),
    Variant(
        "show_and_tell",
        "zeroed_in_place",
        "    return torch.zeros_like(features)",
        "    return features.zero_()",
        correct=False,
        why="zeroes the caller's features: every later use of them sees no image",
    ),
    Variant(
        "show_and_tell",
        "shuffle_keeps_fixed_points",
        "        if bool((perm != torch.arange(n)).all()):\n            return features[perm.to(features.device)]",
        "        return features[perm.to(features.device)]",
        correct=False,
        why="a plain random permutation: some scenes keep their own image, so the control leaks",
    ),
    Variant(
        "show_and_tell",
        "shuffle_ignores_the_generator",
        "        perm = torch.randperm(n, generator=generator)",
        "        perm = torch.arange(n).roll(1)",
        correct=False,
        why="always the same rotation: no fixed point, but not drawn from the generator",
    ),
    Variant(
        "show_and_tell",
        "shuffle_by_random_cycle",
        "    while True:  # a uniform permutation, redrawn until no scene keeps its own (about e = 2.7 draws on average)\n"
        "        perm = torch.randperm(n, generator=generator)\n"
        "        if bool((perm != torch.arange(n)).all()):\n"
        "            return features[perm.to(features.device)]\n",
        "    order = torch.randperm(n, generator=generator)\n"
        "    source = torch.empty_like(order)\n"
        "    source[order] = order.roll(-1)  # scene order[m] reads scene order[m + 1]: one cycle through all\n"
        "    return features[source.to(features.device)]\n",
        correct=True,
        why="one random cycle through every scene (not uniform over derangements, but no fixed point)",
    ),
    # The docstring's return types of retrieval (the return-value audit in docs/grader.md).
    Variant(
        "show_and_tell",
        "recall_clamped_to_an_int",
        "    return (ranks <= k).double().mean().item()",
        "    return min(1, (ranks <= k).double().mean().item())",
        correct=False,
        why="clamps with min(1, recall): a recall of 1.0 comes back as the int 1, not a Python float",
    ),
    Variant(
        "show_and_tell",
        "recall_returns_a_tensor",
        "    return (ranks <= k).double().mean().item()",
        "    return (ranks <= k).double().mean()",
        correct=False,
        why="returns a 0-d tensor where the docstring promises a Python float",
    ),
    Variant(
        "show_and_tell",
        "log_probs_in_float64",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1)",
        "    return picked.masked_fill(targets == PAD, 0.0).sum(1, dtype=torch.float64)",
        correct=False,
        why="sums in float64: a float32 model's scores come back as float64, not the logits' dtype",
    ),
]
