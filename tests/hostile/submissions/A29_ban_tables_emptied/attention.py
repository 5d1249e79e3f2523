# hostile: appended to solutions/attention.py
# A29: the ban of the reference op lives in the worker, beside the student's module: empty its tables at import,
# then call the reference op itself in attend.
import autograder.worker.forbidden as _forbidden

for _op in list(_forbidden.OPS):
    _forbidden.OPS[_op] = ()
    _forbidden.FUNCTION_NAMES[_op] = ()


def attend(query, keys, values):
    context = F.scaled_dot_product_attention(query.unsqueeze(1), keys, values).squeeze(1)
    weights = torch.softmax((keys @ query.unsqueeze(-1)).squeeze(-1) / math.sqrt(query.shape[-1]), dim=-1)
    return context, weights
