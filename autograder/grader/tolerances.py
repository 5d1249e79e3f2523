"""The tolerances only hidden checks use, named as the public ones are (autograder/public/tolerances.py, whose
docstring says how a tolerance reads): kept in the grader's zone, like the hidden checks' strategies, so that the
handout holds nothing only a hidden check uses."""

from __future__ import annotations

from autograder.public.compare import Tolerance

IMAGE_IGNORED = Tolerance(1e-6, 1e-6)  # float32 logits that must not move: the same float32 arithmetic
BATCHED_BEAMS = Tolerance(1e-9, 1e-9)  # one item's beams batched and alone: the same float32 arithmetic
BLEU_NLTK = Tolerance(1e-9, 1e-12)  # nltk counts exactly too (docs/bleu.md measured 2e-16)
BLEU_COCO = Tolerance(1e-7, 1e-9)  # pycocoevalcap adds 1e-15 / 1e-9 to counts and lengths (docs/bleu.md: 2e-9)
LSTM_A_FLOAT32 = Tolerance(1e-5, 1e-5)  # float32 weights at the lecture's sizes: float32 rounding is ~4e-7
STYLED_SGD_STEP = Tolerance(1e-4, 1e-6)  # float32 parameters after one SGD step against float64
