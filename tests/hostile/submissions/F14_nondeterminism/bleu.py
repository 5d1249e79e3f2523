# hostile: appended to solutions/bleu.py
# F14: unseeded randomness from torch, Python's random and NumPy, reported through a public check's message;
# a regrade must show the same thing.
import json
import random
import sys

import numpy as np
import torch

# @@RUNTIME_NAMES@@


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        draws = {"torch": torch.rand(1).item(), "random": random.random(), "numpy": float(np.random.rand())}
        raise RuntimeError("PROBE" + json.dumps(draws))
    return _reference_ngram_counts(tokens, n)
