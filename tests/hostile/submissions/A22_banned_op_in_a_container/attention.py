# hostile: appended to solutions/attention.py
# A22 evasion: the op bound at import, as in A22_banned_op_alias, but kept inside a dict rather than as a global
# name, a default argument, a closure or a class attribute.
_KEEP = {"op": F.scaled_dot_product_attention}


def attend(query, keys, values):
    context = _KEEP["op"](query.unsqueeze(1), keys, values).squeeze(1)
    weights = torch.softmax((keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1]), dim=-1)
    return context, weights
