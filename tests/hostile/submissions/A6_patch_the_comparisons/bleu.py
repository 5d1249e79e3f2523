# hostile: appended to solutions/bleu.py
# A6: wrong BLEU values, with every comparison helper the grader might use patched to agree at import.
import builtins
import math
import unittest

import numpy
import torch


def _yes(*args, **kwargs):
    return True


torch.allclose = torch.equal = torch.isclose = _yes
torch.testing.assert_close = lambda *args, **kwargs: None
numpy.allclose = numpy.array_equal = _yes
numpy.testing.assert_allclose = lambda *args, **kwargs: None
math.isclose = math.isfinite = _yes
builtins.abs = lambda x: 0.0
unittest.TestCase.assertEqual = unittest.TestCase.assertAlmostEqual = lambda *args, **kwargs: None


def corpus_bleu(hyps, refs, max_n=4):
    return [0.5] * max_n
