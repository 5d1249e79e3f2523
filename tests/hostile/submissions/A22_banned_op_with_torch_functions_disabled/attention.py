# hostile: appended to solutions/attention.py
# A22 evasion: the op kept in a container at import and called with torch's function handling switched off,
# which hides the call from the ban's function mode.


_KEPT = {"op": torch.nn.functional.scaled_dot_product_attention}


def attend(query, keys, values):
    with torch._C.DisableTorchFunction():
        context = _KEPT["op"](query.unsqueeze(1), keys, values).squeeze(1)
    weights = torch.softmax((keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1]), dim=-1)
    return context, weights
