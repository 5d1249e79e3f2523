"""Part 7 variants."""

from tests.meta.variants import Variant

VARIANTS = [
    # -- bugs ---------------------------------------------------------------------------------------
    Variant(
        "stylenet",
        "mix_weights_swapped",
        '            S = (1 - mix) * self.S["factual"] + mix * self.S["romantic"]',
        '            S = mix * self.S["factual"] + (1 - mix) * self.S["romantic"]',
        correct=False,
        why="a mix lam weighs S_factual by lam instead of 1 - lam",
    ),
    Variant(
        "stylenet",
        "mix_of_zero_treated_as_no_mix",
        "        if mix is not None:\n            S = (1 - mix)",
        "        if mix:\n            S = (1 - mix)",
        correct=False,
        why="`if mix:` is false for lam = 0, so a zero mix falls back to the style's own factor",
    ),
    Variant(
        "stylenet",
        "gates_in_order_i_f_o_g",
        "        i, f, g, o = gates.chunk(4, -1)",
        "        i, f, o, g = gates.chunk(4, -1)",
        correct=False,
        why="the gates are not in nn.LSTMCell's order i, f, g, o",
    ),
    Variant(
        "stylenet",
        "h_without_tanh",
        "        h = torch.sigmoid(o) * torch.tanh(c)\n        return h, c",
        "        h = torch.sigmoid(o) * c\n        return h, c",
        correct=False,
        why="the slide's formula h = o * c, without the tanh",
    ),
    Variant(
        "stylenet",
        "forward_ignores_the_mix",
        "        gates = x @ self.input_weight().T + self.W_h(h) + self.b",
        "        gates = x @ self.input_weight(self.style).T + self.W_h(h) + self.b",
        correct=False,
        why="forward passes the cell's style but drops its mix",
    ),
    Variant(
        "stylenet",
        "input_weight_through_data",
        "        return self.U @ S @ self.V\n",
        "        return self.U.data @ S @ self.V.data\n",
        correct=False,
        why=".data cuts U and V out of the graph: they never learn",
    ),
    Variant(
        "stylenet",
        "styled_step_masks_gradients_only",
        "    with torch.no_grad():  # 2. undo whatever the optimizer still did to the rest\n"
        "        for (name, p), saved in zip(others, snapshot):\n"
        "            if name in row_masks:\n"
        "                p.copy_(torch.where(row_masks[name], p, saved))\n"
        "            else:\n"
        "                p.copy_(saved)\n",
        "",
        correct=False,
        why="masks the gradients as the lecture does but never restores: momentum and weight decay "
        "still move the other parameters",
    ),
    Variant(
        "stylenet",
        "styled_loss_counts_pad",
        "captions[:, 1:].reshape(-1), ignore_index=PAD)",
        "captions[:, 1:].reshape(-1))",
        correct=False,
        why="the styled loss averages over PAD targets too",
    ),
    Variant(
        "stylenet",
        "styled_step_without_zero_grad",
        "    model.zero_grad(set_to_none=True)\n",
        "",
        correct=False,
        why="stale gradients from the factual batch are added to the styled gradient",
    ),
    Variant(
        "stylenet",
        "styled_step_under_the_current_style",
        '    model.set_style("romantic")\n',
        "",
        correct=False,
        why="the styled batch runs under whatever factor the model had, not S_romantic",
    ),
    Variant(
        "stylenet",
        "styled_step_restores_the_style_rows_too",
        "                p.copy_(torch.where(row_masks[name], p, saved))",
        "                p.copy_(saved)",
        correct=False,
        why="restores every row, so the style words' embedding and output rows never learn",
    ),
    Variant(
        "stylenet",
        "styled_step_returns_the_loss_tensor",
        "    return loss.item()\n",
        "    return loss\n",
        correct=False,
        why="returns the loss tensor (with its graph) instead of a float",
    ),
    # -- correct alternatives -------------------------------------------------------------------------
    Variant(
        "stylenet",
        "input_weight_by_interpolation_and_multi_dot",
        "        if mix is not None:\n"
        '            S = (1 - mix) * self.S["factual"] + mix * self.S["romantic"]\n'
        "        else:\n"
        "            S = self.S[style]\n"
        "        return self.U @ S @ self.V\n",
        '        S = self.S[style] if mix is None else self.S["factual"] + mix * (self.S["romantic"] - self.S["factual"])\n'
        "        return torch.linalg.multi_dot([self.U, S, self.V])\n",
        correct=True,
        why="S_f + lam (S_r - S_f) and multi_dot: the same matrix, computed differently",
    ),
    Variant(
        "stylenet",
        "forward_by_slices_in_float64",
        "        h, c = state\n"
        "        gates = x @ self.input_weight().T + self.W_h(h) + self.b\n"
        "        i, f, g, o = gates.chunk(4, -1)\n"
        "        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)\n"
        "        h = torch.sigmoid(o) * torch.tanh(c)\n"
        "        return h, c\n",
        "        h_prev, c_prev = state\n"
        "        H = self.H\n"
        "        W = self.input_weight(self.style, self.mix).double()\n"
        "        gates = F.linear(x.double(), W, self.b.double()) + F.linear(h_prev.double(), self.W_h.weight.double(),\n"
        "                                                                    self.W_h.bias.double())\n"
        "        i = torch.sigmoid(gates[:, :H])\n"
        "        f = torch.sigmoid(gates[:, H:2 * H])\n"
        "        g = torch.tanh(gates[:, 2 * H:3 * H])\n"
        "        o = torch.sigmoid(gates[:, 3 * H:])\n"
        "        c_new = f * c_prev.double() + i * g\n"
        "        h_new = o * torch.tanh(c_new)\n"
        "        return h_new.to(x.dtype), c_new.to(x.dtype)\n",
        correct=True,
        why="F.linear, explicit gate slices and a float64 intermediate, cast back to the input dtype",
    ),
    Variant(
        "stylenet",
        "styled_step_by_index_and_left_romantic",
        "    rows = style_row_mask(model.out.out_features, model.out.weight.device)\n"
        '    row_masks = {"emb.weight": rows.unsqueeze(1), "out.weight": rows.unsqueeze(1), "out.bias": rows}\n'
        '    others = [(name, p) for name, p in model.named_parameters() if name != "cell.S.romantic"]\n'
        "    snapshot = [p.detach().clone() for _, p in others]\n"
        "\n"
        "    previous = (model.cell.style, model.cell.mix)\n"
        '    model.set_style("romantic")\n'
        "    logits = model(captions, state)\n"
        "    if loss_fn is None:\n"
        "        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), captions[:, 1:].reshape(-1), ignore_index=PAD)\n"
        "    else:\n"
        "        loss = loss_fn(logits, captions)\n"
        "    model.set_style(*previous)\n"
        "    model.zero_grad(set_to_none=True)\n"
        "    loss.backward()\n"
        "\n"
        "    for name, p in others:  # 1. mask the gradients\n"
        "        if name in row_masks and p.grad is not None:\n"
        "            p.grad.mul_(row_masks[name])\n"
        "        else:\n"
        "            p.grad = None\n"
        "    optimizer.step()\n"
        "    with torch.no_grad():  # 2. undo whatever the optimizer still did to the rest\n"
        "        for (name, p), saved in zip(others, snapshot):\n"
        "            if name in row_masks:\n"
        "                p.copy_(torch.where(row_masks[name], p, saved))\n"
        "            else:\n"
        "                p.copy_(saved)\n"
        "    return loss.item()\n",
        "    params = dict(model.named_parameters())\n"
        '    keep = {name: p.detach().clone() for name, p in params.items() if name != "cell.S.romantic"}\n'
        "    ids = torch.tensor(STYLE_IDS, device=model.out.weight.device)\n"
        '    model.cell.style, model.cell.mix = "romantic", None  # left romantic afterwards\n'
        "    for p in params.values():\n"
        "        p.grad = None\n"
        "    logits = model(captions, state)\n"
        "    target = captions[:, 1:]\n"
        "    real = target != PAD\n"
        "    loss = F.cross_entropy(logits[real], target[real]) if loss_fn is None else loss_fn(logits, captions)\n"
        "    loss.backward()\n"
        "    for name, p in params.items():\n"
        '        if name == "cell.S.romantic":\n'
        "            continue\n"
        '        if name in ("emb.weight", "out.weight", "out.bias") and p.grad is not None:\n'
        "            kept = torch.zeros_like(p.grad)\n"
        "            kept[ids] = p.grad[ids]\n"
        "            p.grad = kept\n"
        "        else:\n"
        "            p.grad = None\n"
        "    optimizer.step()\n"
        "    with torch.no_grad():\n"
        "        for name, saved in keep.items():\n"
        "            p = params[name]\n"
        '            if name in ("emb.weight", "out.weight", "out.bias"):\n'
        "                saved[ids] = p[ids]\n"
        "            p.copy_(saved)\n"
        "    return float(loss)\n",
        correct=True,
        why="index-based masking and restoring, boolean-mask loss, style left romantic after the step",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "stylenet",
        "cell_returns_a_list",
        "        return h, c\n",
        "        return [h, c]\n",
        correct=False,
        why="the cell returns [h, c], a list, where the docstring promises a tuple (h, c)",
    ),
]
