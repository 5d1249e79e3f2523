# hostile: appended to solutions/attention.py
# A22 evasion: the same op looked up at call time through the operator registry (torch.ops.aten), a path the
# ban does not list.


def attend(query, keys, values):
    context = torch.ops.aten.scaled_dot_product_attention(query.unsqueeze(1), keys, values).squeeze(1)
    weights = torch.softmax((keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1]), dim=-1)
    return context, weights
