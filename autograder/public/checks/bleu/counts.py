"""Part 3 public checks, the counts: ngram_counts and clipped_counts on the golden cases (in the grader's round, on
captions of its own, counted by its reference)."""

from __future__ import annotations

from hypothesis import given

from autograder.public.checks import check, current_round
from autograder.public.checks.bleu.calls import _check_clipped, _check_ngram_counts
from autograder.public.checks.bleu.cases import CLIPPED_CASES, NGRAM_CASES, _counter, _golden
from autograder.public.strategies import (
    FEW,
    bleu_sentence,
    bleu_words,
    clipped_orders,
    ngram_orders,
)

# -- public checks ------------------------------------------------------------------------------------


@check()
def ngram_counts_is_the_counter_of_ngrams(student, ctx):
    """ngram_counts returns a Counter of every run of n words (n-gram tuples), empty when the caption is shorter."""
    now = current_round()
    if now.public:
        for (tokens, n), expected in zip(NGRAM_CASES, _golden("ngram_counts")):
            _check_ngram_counts(student, tokens, n, _counter(expected))
        return

    @FEW
    @given(bleu_words(4, 0, 7), ngram_orders)
    def graders(tokens, n):
        _check_ngram_counts(student, tokens, n, dict(now.reference("bleu").ngram_counts(tokens, n)))

    graders()


@check()
def clipped_counts_clip_at_the_most_in_one_reference(student, ctx):
    """clipped_counts credits each n-gram at most as often as one reference has it (Papineni: 2 of 7)."""
    now = current_round()
    if now.public:
        for (hyp, refs, n), expected in zip(CLIPPED_CASES, _golden("clipped_counts")):
            _check_clipped(student, hyp, refs, n, tuple(expected))
        return

    @FEW
    @given(bleu_sentence(vocab=3, max_words=6), clipped_orders)
    def graders(sentence, n):
        _check_clipped(student, *sentence, n, now.reference("bleu").clipped_counts(*sentence, n))

    graders()
