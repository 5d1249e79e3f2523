# hostile: appended to solutions/attention.py
# A22 evasion with names built at run time: neither the op's name nor the names of the ban's machinery appear in
# the source, so a scan for names sees nothing. The op is kept at import (in a plain list, which the worker's search
# for held references does not open) and called with torch's function handling switched off.


def _name(*pieces):
    return "".join(pieces)


_KEPT = [getattr(F, _name("scaled", "_dot", "_product", "_attention"))]
_SWITCH = getattr(getattr(torch, _name("_", "C")), _name("Disable", "Torch", "Function"))


def attend(query, keys, values):
    with _SWITCH():
        context = _KEPT[0](query.unsqueeze(1), keys, values).squeeze(1)
        weights = _KEPT[0](query.unsqueeze(1), keys, torch.eye(keys.shape[1], dtype=keys.dtype).expand(
            keys.shape[0], -1, -1)).squeeze(1)
    return context, weights
