# hostile: appended to solutions/attention.py
# F6: the right context values with an extra leading axis: (1, N, D) broadcasts against (N, D), so
# torch.allclose(got, expected) would be True.
_reference_attend = attend


def attend(query, keys, values):
    context, weights = _reference_attend(query, keys, values)
    return context.unsqueeze(0), weights
