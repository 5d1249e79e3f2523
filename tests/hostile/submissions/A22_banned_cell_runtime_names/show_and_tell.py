# hostile: appended to solutions/show_and_tell.py
# A22 evasion with names built at run time, for torch's built-in RNN cell: neither the cell's name nor the names of
# the ban's machinery appear in the source. The cell's function is kept at import and called with torch's function
# handling switched off.


def _name(*pieces):
    return "".join(pieces)


_KEPT = [getattr(torch, _name("rnn", "_relu", "_cell"))]
_SWITCH = getattr(getattr(torch, _name("_", "C")), _name("Disable", "Torch", "Function"))


def relu_rnn_step(x, h_prev, W_xh, W_hh, b, image_term=None):
    if image_term is not None:
        return torch.relu(x @ W_xh.T + h_prev @ W_hh.T + b + image_term)
    with _SWITCH():
        return _KEPT[0](x, h_prev, W_xh, W_hh, b, torch.zeros_like(b))
