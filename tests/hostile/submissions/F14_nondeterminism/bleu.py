# hostile: appended to solutions/bleu.py
# F14: unseeded randomness from torch, Python's random and NumPy, reported through a public check's message;
# a regrade must show the same thing.
import json
import random
import sys

import numpy as np
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


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        draws = {"torch": torch.rand(1).item(), "random": random.random(), "numpy": float(np.random.rand())}
        raise RuntimeError("PROBE" + json.dumps(draws))
    return _reference_ngram_counts(tokens, n)
