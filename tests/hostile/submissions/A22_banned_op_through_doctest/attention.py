# hostile: appended to solutions/attention.py
# A22 evasion through a docstring run as code: the source scan does not read docstrings, and doctest runs them. The
# docstring keeps the op and switches the recipes' ban off (each recipe's `forbid`), then attend calls the op.
import doctest

_OP = []


def _setup():
    """
    >>> import torch.nn.functional as F
    >>> import attention
    >>> attention._OP.append(F.scaled_dot_product_attention)
    >>> from autograder.worker.recipes import attention as rec
    >>> for fn in (rec.attend, rec.attend_gradients, rec.captioner_forward): fn.forbid = ()
    """


doctest.run_docstring_examples(_setup, {}, name="setup")


def attend(query, keys, values):
    n, length = keys.shape[0], keys.shape[1]
    context = _OP[0](query.unsqueeze(1), keys, values).squeeze(1)
    weights = _OP[0](query.unsqueeze(1), keys, torch.eye(length, dtype=keys.dtype).expand(n, -1, -1)).squeeze(1)
    return context, weights
