"""Part 3 public checks: BLEU from scratch. No implementation of BLEU or of its pieces is in this module (a
student who reads it finds no answer). Expected values come from:
- closed forms: the lecture's and the spec's worked examples, whose precisions and lengths are written out by hand;
  the brevity penalty 1 or exp(1 - r/c) where every p_n = 1;
- identities: a corpus scored against references that include each candidate has BLEU 1; a corpus built so that
  some p_k is 0 (or c = 0) has BLEU-k .. BLEU-max_n exactly 0 (autograder.public.strategies.bleu_zero_corpus knows k
  by construction);
- golden data (autograder/public/golden/bleu.pt): the reference's n-gram counts, clipped counts and brevity
  penalties on the fixed public cases below, computed by `python -m instructor golden`.
In the grader's round every check draws corpora of its own, scored by the reference there, so stored answers to the
public cases earn nothing. Counts are exact integers, so BLEU values are compared with a tight rtol and an atol floor
(tolerances.BLEU) that allow rounding only: a score that must be 0 must be 0 (tolerances.BLEU_ZERO), and a smoothing
constant in place of it fails (the zero conventions' check).
(The part's hidden checks, against the reference, nltk and pycocoevalcap, run in the grader after the deadline.)

The checks live in this package's modules: calls (calling the student's functions, comparing scores, the anchors),
cases (the fixed public cases, golden_cases and FINGERPRINT), then the checks in the order they run, counts
(ngram_counts, clipped_counts) and scores (corpus_bleu). This module imports them in that order, and holds the names
other modules read from the part's checks: the hidden checks' helpers, the cases, golden_cases and FINGERPRINT.
"""

from __future__ import annotations

# The modules in the order their checks register, which is the part's order of checks (isort would sort them);
# each name imported from one is a name other modules read from the package.
# isort: off
from autograder.public.checks.bleu import calls
from autograder.public.checks.bleu.calls import (
    _call,
    _check_clipped,
    _check_ngram_counts,
    _clipped_counts,
    _corpus_bleu,
    _describe,
    _expect_scores,
    _ngram_counts,
    decided_by_a_convention,
    expect_scores_depend_on_the_captions,
    has_length_tie,
    one_word_replaced,
)
from autograder.public.checks.bleu import cases
from autograder.public.checks.bleu.cases import (
    BREVITY_CASES,
    CLIPPED_CASES,
    FINGERPRINT,
    NGRAM_CASES,
    TIE_CASES,
    golden_cases,
)
from autograder.public.checks.bleu import counts
from autograder.public.checks.bleu import scores
from autograder.public.checks.bleu.scores import WORKED, ZEROS
# isort: on

__all__ = [
    "BREVITY_CASES",
    "CLIPPED_CASES",
    "FINGERPRINT",
    "NGRAM_CASES",
    "TIE_CASES",
    "WORKED",
    "ZEROS",
    "_call",
    "_check_clipped",
    "_check_ngram_counts",
    "_clipped_counts",
    "_corpus_bleu",
    "_describe",
    "_expect_scores",
    "_ngram_counts",
    "calls",
    "cases",
    "counts",
    "decided_by_a_convention",
    "expect_scores_depend_on_the_captions",
    "golden_cases",
    "has_length_tie",
    "one_word_replaced",
    "scores",
]
