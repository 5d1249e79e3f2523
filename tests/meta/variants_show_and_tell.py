"""Part 1 variants."""
from tests.meta.variants import Variant

_LOSS = ("    targets = captions[:, 1:]\n"
         "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)\n")

VARIANTS = [
    Variant("show_and_tell", "recurrence_weights_not_transposed",
            "h_prev @ W_hh.T", "h_prev @ W_hh",
            correct=False, why="h_prev W_hh instead of h_prev W_hh^T: right shapes, wrong recurrence"),
    Variant("show_and_tell", "loss_averages_over_padding_too",
            ", ignore_index=PAD)", ")",
            correct=False, why="PAD targets count in the mean: the model is trained to predict padding"),
    Variant("show_and_tell", "loss_masks_by_the_inputs",
            _LOSS,
            "    targets = captions[:, 1:]\n"
            "    mask = (captions[:, :-1] != PAD).float()\n"
            "    nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction='none')\n"
            "    return (nll * mask.reshape(-1)).sum() / mask.sum()\n",
            correct=False, why="masks positions whose input is PAD, so the PAD right after END is still scored"),
    Variant("show_and_tell", "loss_is_a_mean_of_per_caption_means",
            _LOSS,
            "    targets = captions[:, 1:]\n"
            "    mask = (targets != PAD).float()\n"
            "    nll = F.cross_entropy(logits.transpose(1, 2), targets, reduction='none')\n"
            "    return ((nll * mask).sum(1) / mask.sum(1)).mean()\n",
            correct=False, why="averages each caption first: short captions weigh more than the contract's mean"),
    Variant("show_and_tell", "image_at_every_step",
            "image_term if t == 0 else None)", "image_term)",
            correct=False, why="forward adds W_ih v at every step instead of only the first"),
    Variant("show_and_tell", "image_at_the_second_step",
            "image_term if t == 0 else None)", "image_term if t == 1 else None)",
            correct=False, why="the lecture's indexing warning: the image enters with the first word, not with START"),
    Variant("show_and_tell", "step_keeps_the_image_term",
            "(h, torch.zeros_like(image_term))", "(h, image_term)",
            correct=False, why="step hands the image term on, so decoding adds the image again at every step"),
    Variant("show_and_tell", "step_returns_logits",
            "return F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))",
            "return self.out(h), (h, torch.zeros_like(image_term))",
            correct=False, why="step returns unnormalised scores where the decoding protocol wants log-probabilities"),
    Variant("show_and_tell", "forward_feeds_the_targets",
            "W_xh, W_hh, b = self.W_xh.weight, self.W_hh.weight, self.W_xh.bias\n        x = self.emb(captions[:, :-1])",
            "W_xh, W_hh, b = self.W_xh.weight, self.W_hh.weight, self.W_xh.bias\n        x = self.emb(captions[:, 1:])",
            correct=False, why="off by one: the inputs are captions[:, 1:], so each step sees the word it must predict"),
    Variant("show_and_tell", "relu_step_by_linear_and_clamp",
            "    pre = x @ W_xh.T + h_prev @ W_hh.T + b\n    if image_term is not None:\n        pre = pre + image_term\n"
            "    return torch.relu(pre)\n",
            "    pre = F.linear(x, W_xh, b)\n    pre += F.linear(h_prev, W_hh)\n    if image_term is not None:\n"
            "        pre += image_term\n    return pre.clamp_(min=0)\n",
            correct=True, why="F.linear, in-place accumulation on a fresh tensor and clamp instead of relu"),
    Variant("show_and_tell", "loss_by_gather_and_boolean_mask",
            _LOSS,
            "    targets = captions[:, 1:]\n"
            "    nll = -logits.log_softmax(-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)\n"
            "    return nll[targets != PAD].mean()\n",
            correct=True, why="log_softmax, gather and a boolean mask instead of F.cross_entropy's ignore_index"),
    Variant("show_and_tell", "forward_built_on_step",
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
            correct=True, why="teacher forcing through step: returns log-probabilities, logits up to a constant per "
                              "position, which caption_loss and every softmax treat identically"),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant("show_and_tell", "loss_returns_a_one_element_vector",
            "targets.reshape(-1), ignore_index=PAD)\n    ### END SOLUTION",
            "targets.reshape(-1), ignore_index=PAD).reshape(1)\n    ### END SOLUTION",
            correct=False, why="returns the loss as a (1,) tensor where the docstring promises a scalar tensor (shape ())"),
    Variant("show_and_tell", "init_state_returns_a_list",
            "return h, self.W_ih(self.image_vector(features))",
            "return [h, self.W_ih(self.image_vector(features))]",
            correct=False, why="returns the state as a list: the kit's decoders refuse a state that is not a tuple"),
    Variant("show_and_tell", "step_returns_the_state_as_a_list",
            "(h, torch.zeros_like(image_term))",
            "[h, torch.zeros_like(image_term)]",
            correct=False, why="returns the new state as a list where the docstring promises a tuple (h, zeros)"),
    Variant("show_and_tell", "step_returns_a_list",
            "        return F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))",
            "        return [F.log_softmax(self.out(h), -1), (h, torch.zeros_like(image_term))]",
            correct=False, why="returns [log_probs, state], a list, where the decoding protocol returns a tuple"),
]
