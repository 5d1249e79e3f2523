"""Part 3 hidden checks: BLEU from scratch on more and longer cases, against the reference (solutions/bleu.py) and
nltk and pycocoevalcap where their conventions coincide with the spec's (docs/bleu.md). Every corpus here has c > 0
and every p_n > 0: the zero conventions are tested by one public check only. (The public checks and the helpers both
use: autograder/public/checks/bleu/.)"""

from __future__ import annotations

import hashlib
import random

from hypothesis import assume, given
from hypothesis import strategies as st

from autograder.grader.strategies import longer_ngram_orders, max_orders, optional_higher_max_orders
from autograder.grader.tolerances import BLEU_COCO, BLEU_NLTK
from autograder.public.checks import bleu as public
from autograder.public.checks import check
from autograder.public.checks.bleu import (
    _call,
    _clipped_counts,
    _corpus_bleu,
    _describe,
    _expect_scores,
    _ngram_counts,
    expect_scores_depend_on_the_captions,
    has_length_tie,
)
from autograder.public.compare import expect
from autograder.public.limits import LIMITS
from autograder.public.strategies import (
    MORE,
    PROPERTY,
    bleu_corpus,
    bleu_margins,
    bleu_oracle_corpus,
    bleu_reorderable_corpus,
    bleu_sentence,
    bleu_separators,
)
from autograder.public.tolerances import BLEU
from shared.vocab import COLOR_WORDS, SHAPE_WORDS
from solutions import bleu as reference

# The case count of these properties (PROPERTY). Hypothesis derives a derandomised property's cases from its source
# text, decorators included: under another name here, every case these checks have always drawn would change.
HIDDEN = PROPERTY


def anchor_words(ctx, check: str) -> list[str]:
    """The words of an anchor caption (public.one_word_replaced) no student can know: 4 to 7 distinct words of the
    scenes' captions, drawn from the hidden test secret and the check's name (outside the property, whose drawn
    cases stay as they were)."""
    words = sorted({"a", "of", "above", "below", "left", "right", *COLOR_WORDS, *SHAPE_WORDS})
    rng = random.Random(hashlib.sha256(f"{ctx.test_secret:x}:bleu.{check}:anchor".encode()).digest())
    return rng.sample(words, rng.randint(4, 7))


# The public checks' helpers with the reference's answers (the public module holds no implementation of BLEU).
def _check_ngram_counts(student, tokens, n):
    public._check_ngram_counts(student, tokens, n, dict(reference.ngram_counts(tokens, n)))


def _check_clipped(student, hyp, refs, n):
    public._check_clipped(student, hyp, refs, n, reference.clipped_counts(hyp, refs, n))


def decided_by_a_convention(hyps, refs, max_n) -> bool:
    return public.decided_by_a_convention(hyps, refs, max_n, reference)


# -- hidden checks ------------------------------------------------------------------------------------


@check(timeout=LIMITS.hidden_check)
def ngram_and_clipped_counts_on_random_captions(student, ctx):
    """ngram_counts and clipped_counts match their definitions on longer random captions."""

    @MORE
    @given(bleu_sentence(vocab=4, max_refs=4, max_words=12), longer_ngram_orders)
    def prop(sentence, n):
        hyp, refs = sentence
        _check_ngram_counts(student, hyp, n)
        _check_clipped(student, hyp, refs, n)

    prop()


@check(timeout=LIMITS.hidden_check)
def corpus_bleu_matches_the_definition(student, ctx):
    """corpus_bleu equals the reference on random corpora (clipped corpus sums, closest r, BLEU-1..max_n)."""

    @MORE
    @given(bleu_corpus(max_sentences=8), optional_higher_max_orders)
    def prop(corpus, max_n):
        hyps, refs = corpus
        # the zero conventions (some p_n = 0, or c = 0) are bleu_is_zero_when_a_precision_is_zero_or_c_is_zero's
        assume(not has_length_tie(hyps, refs) and not decided_by_a_convention(hyps, refs, max_n))
        expected = reference.corpus_bleu(hyps, refs) if max_n is None else reference.corpus_bleu(hyps, refs, max_n)
        case = _describe(hyps, refs, max_n)
        _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, BLEU, case)

    prop()


@check(timeout=LIMITS.hidden_check)
def corpus_bleu_is_invariant_to_corpus_order(student, ctx):
    """Permuting the sentences (candidates with their references) or a sentence's references leaves BLEU unchanged."""
    corpora = bleu_reorderable_corpus()

    @HIDDEN
    @given(corpora, max_orders, st.data())
    def prop(corpus, max_n, data):
        hyps, refs = corpus
        assume(not has_length_tie(hyps, refs) and not decided_by_a_convention(hyps, refs, max_n))
        order = data.draw(st.permutations(range(len(hyps))))
        hyps2 = [hyps[i] for i in order]
        refs2 = [data.draw(st.permutations(refs[i])) for i in order]
        case = _describe(hyps, refs, max_n)
        first = _corpus_bleu(student, hyps, refs, max_n, case)
        again = _corpus_bleu(student, hyps2, refs2, max_n, f"the same corpus reordered: {_describe(hyps2, refs2)}")
        _expect_scores(
            "corpus_bleu of the reordered corpus",
            again,
            first,
            BLEU,
            f"{case}; reordered: {_describe(hyps2, refs2)}",
        )

    prop()
    expect_scores_depend_on_the_captions(
        student, "invariance to the corpus order", drawn=anchor_words(ctx, "corpus_bleu_is_invariant_to_corpus_order")
    )


@check(timeout=LIMITS.hidden_check)
def corpus_bleu_agrees_with_nltk_and_pycocoevalcap(student, ctx):
    """BLEU-1..4 agree with nltk's corpus_bleu and pycocoevalcap's Bleu where their conventions coincide."""
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
    from pycocoevalcap.bleu.bleu import Bleu

    @HIDDEN
    @given(bleu_oracle_corpus())
    def prop(corpus):
        hyps, refs = corpus
        assume(not has_length_tie(hyps, refs))
        # where the conventions coincide (docs/bleu.md): every candidate has 4 words or more, every p_n > 0
        assert all(len(h.split()) >= 4 for h in hyps) and min(reference.corpus_bleu(hyps, refs)) > 0
        case = _describe(hyps, refs)
        got = _corpus_bleu(student, hyps, refs, 4, case)
        weights = [(1.0 / n,) * n for n in range(1, 5)]
        nltk = nltk_corpus_bleu([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps], weights=weights)
        _expect_scores("corpus_bleu against nltk's corpus_bleu", got, [float(x) for x in nltk], BLEU_NLTK, case)
        coco, _ = Bleu(4).compute_score(
            {i: list(rs) for i, rs in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)}, verbose=0
        )
        _expect_scores("corpus_bleu against pycocoevalcap's Bleu", got, [float(x) for x in coco], BLEU_COCO, case)

    prop()


@check(timeout=LIMITS.hidden_check)
def captions_are_split_on_any_whitespace(student, ctx):
    """corpus_bleu splits captions with str.split(): runs of spaces, tabs, newlines and margins are one separator."""

    @HIDDEN
    @given(bleu_corpus(max_sentences=4), max_orders, st.data())
    def prop(corpus, max_n, data):
        hyps, refs = corpus
        assume(not decided_by_a_convention(hyps, refs, max_n))

        def spaced(caption: str) -> str:
            words = caption.split()
            seps = [data.draw(bleu_separators) for _ in words[1:]] + [""]
            lead, tail = data.draw(bleu_margins), data.draw(bleu_margins)
            return lead + "".join(w + s for w, s in zip(words, seps)) + tail

        hyps2, refs2 = [spaced(h) for h in hyps], [[spaced(r) for r in rs] for rs in refs]
        case = _describe(hyps, refs, max_n)
        plain = _corpus_bleu(student, hyps, refs, max_n, case)
        case2 = f"{_describe(hyps2, refs2, max_n)}; the same words as {case}"
        _expect_scores(
            "corpus_bleu of the respaced corpus",
            _corpus_bleu(student, hyps2, refs2, max_n, case2),
            plain,
            BLEU,
            case2,
        )

    prop()
    expect_scores_depend_on_the_captions(
        student, "invariance to whitespace", drawn=anchor_words(ctx, "captions_are_split_on_any_whitespace")
    )


@check()
def bleu_functions_leave_their_inputs_unchanged(student, ctx):
    """corpus_bleu, clipped_counts and ngram_counts do not modify the captions they are given."""
    hyps = ["a red circle above a red square", "a blue square", ""]
    refs = [
        ["a red circle above a blue square", "a red square below a red circle"],
        ["a blue square"],
        ["a green triangle"],
    ]
    case = _describe(hyps, refs, 3)
    out = _call(student, "inputs_unchanged", case, hyps=hyps, refs=refs, max_n=3, n=2)
    for name in ("corpus_bleu", "clipped_counts", "ngram_counts"):
        before, after = out[name]
        expect(after == before, f"{name} modified its inputs: before {before!r}, after {after!r}", case)
    # Inputs left alone by functions that compute nothing mean nothing: each function must return something.
    case = "the anchor of inputs left unchanged: tokens=" + repr(hyps[0].split()) + ", n=2"
    expect(
        bool(_ngram_counts(student, hyps[0].split(), 2, case)),
        "ngram_counts: returned no bigram for a caption of 7 words: your ngram_counts does not count",
        case,
    )
    case = f"the anchor of inputs left unchanged: hyp={hyps[0].split()!r}, refs={[r.split() for r in refs[0]]!r}, n=2"
    matches, total = _clipped_counts(student, hyps[0].split(), [r.split() for r in refs[0]], 2, case)
    expect(
        total > 0 and matches > 0,
        f"clipped_counts: returned ({matches}, {total}) for a caption of 7 words that "
        "shares bigrams with its references: your clipped_counts does not count",
        case,
    )
    expect_scores_depend_on_the_captions(
        student, "inputs left unchanged", drawn=anchor_words(ctx, "bleu_functions_leave_their_inputs_unchanged")
    )
