# hostile: appended to solutions/attention.py
# A22 evasion: the banned op bound to another name at import, before any check replaces the attribute
# (refused since the worker looks for the original op objects in what the module holds).
from torch.nn.functional import scaled_dot_product_attention as _fused


def attend(query, keys, values):
    context = _fused(query.unsqueeze(1), keys, values).squeeze(1)
    weights = torch.softmax((keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1]), dim=-1)
    return context, weights
