# hostile: appended to solutions/bleu.py
# A9: a Tensor subclass whose __torch_function__ answers True to every comparison (allclose, equal, eq,
# isclose), returned to the grader as an n-gram; a grader loading it would compare with its lies.
import sys

import torch

# @@RUNTIME_NAMES@@

_reference_ngram_counts = ngram_counts


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("allclose", "equal", "eq", "__eq__", "isclose", "assert_close"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):
        return {(torch.zeros(3).as_subclass(Liar),): 1}
    return _reference_ngram_counts(tokens, n)
