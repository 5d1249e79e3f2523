# hostile: appended to solutions/bleu.py
# A9: a Tensor subclass whose __torch_function__ answers True to every comparison (allclose, equal, eq,
# isclose), returned to the grader as an n-gram; a grader loading it would compare with its lies.
import sys

import torch


# Names built at run time: the grader's source scan reads only the names a module's text holds (a student who knows
# the scan writes them so; the sandbox behind it must hold on its own).
def _caller_globals(depth):
    """What sys._getframe(depth).f_globals is in the function that calls this."""
    try:
        raise LookupError
    except LookupError as caught:
        frame = getattr(getattr(caught, "__trace" + "back__"), "tb_" + "frame")
    for _ in range(depth + 1):
        frame = getattr(frame, "f_" + "back")
    return getattr(frame, "f_" + "glo" + "bals")


def _loaded_modules():
    """The registry of loaded modules."""
    return getattr(getattr(_os_for_names, "s" + "ys"), "mod" + "ules")

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
