"""Part 3 public checks, corpus_bleu: the worked examples, a corpus against itself, the brevity penalty and its
closest-length ties, and the zero conventions."""

from __future__ import annotations

import math

from hypothesis import assume, given

from autograder.public.checks import check, current_round
from autograder.public.checks.bleu.calls import (
    CAT_REFS,
    _corpus_bleu,
    _describe,
    _expect_scores,
    decided_by_a_convention,
    expect_scores_depend_on_the_captions,
    has_length_tie,
)
from autograder.public.checks.bleu.cases import BREVITY_CASES, TIE_CASES, _golden
from autograder.public.compare import expect
from autograder.public.strategies import (
    FEW,
    bleu_brevity_corpus,
    bleu_corpus,
    bleu_self_corpus,
    bleu_zero_corpus,
    optional_max_orders,
)
from autograder.public.tolerances import BLEU, BLEU_ZERO

# The case count of these properties (FEW). Hypothesis derives a derandomised property's cases from its source text,
# decorators included: under another name here, every case these checks have always drawn would change.
PUBLIC = FEW


# (what the case shows, hyps, refs, max_n or None for the default 4, the expected BLEU-1 .. BLEU-N in closed form).
# Every p_n is positive and c > 0: the worked examples where a precision or c is 0 are the zero check's (ZEROS).
WORKED = (
    ("an identical caption (lecture): [1, 1, 1, 1]", ["the cat is on the mat"], [CAT_REFS], None, [1.0] * 4),
    (
        "brevity penalty (lecture): c = 6, r = 10, every p_n = 1, BLEU-N = exp(1 - 10/6)",
        ["the cat is on the mat"],
        [["the cat is on the mat and it is asleep"]],
        None,
        [math.exp(1 - 10 / 6)] * 4,
    ),
    (
        "the scene read from the other object (lecture): p_1 = 6/7, p_2 = 4/6, p_3 = 2/5, c = r = 7",
        ["a red circle above a blue square"],
        [["a blue square below a red circle"]],
        3,
        [6 / 7, (6 / 7 * 4 / 6) ** (1 / 2), (6 / 7 * 4 / 6 * 2 / 5) ** (1 / 3)],
    ),
    ("Papineni's clipping: p_1 = 2/7, c = r = 7", ["the the the the the the the"], [CAT_REFS], 1, [2 / 7]),
    (
        "precision summed over the corpus: p_1 = (3 + 6) / (3 + 7), not the mean of 3/3 and 6/7",
        ["a red circle", "a blue square above a green triangle"],
        [["a red circle"], ["a green square above a blue circle"]],
        1,
        [9 / 10],
    ),
    (
        "a candidate shorter than n adds no n-grams: p_3 = 3/3, p_4 = 2/2, c = 7, r = 8",
        ["a red", "a red circle above a"],
        [["a red circle"], ["a red circle above a"]],
        None,
        [math.exp(1 - 8 / 7)] * 4,
    ),
    (
        "closest reference length: r = 6 (of 3, 6 and 11), c = 5",
        ["a red circle above a"],
        [["a red circle", "a red circle above a square", "a red circle above a blue square left of a green triangle"]],
        3,
        [math.exp(1 - 6 / 5)] * 3,
    ),
)


@check()
def corpus_bleu_reproduces_the_worked_examples(student, ctx):
    """corpus_bleu gives the lecture's and the spec's worked values (clipping, corpus sums, brevity)."""
    now = current_round()
    if not now.public:
        # The grader's own corpora, scored by the reference: ordinary captions of one word or more, every p_n
        # positive, as the worked examples' corpora are (zeros, an empty candidate in a corpus and captions split on
        # other whitespace are other checks' to test).
        @FEW
        @given(bleu_corpus(max_sentences=4, min_words=1), optional_max_orders)
        def graders(corpus, max_n):
            hyps, refs = corpus
            assume(
                not has_length_tie(hyps, refs) and not decided_by_a_convention(hyps, refs, max_n, now.reference("bleu"))
            )
            expected = now.reference("bleu").corpus_bleu(hyps, refs, *(() if max_n is None else (max_n,)))
            case = _describe(hyps, refs, max_n)
            _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, BLEU, case)

        graders()
        return
    for what, hyps, refs, max_n, expected in WORKED:
        case = f"{what}; {_describe(hyps, refs, max_n)}"
        _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, BLEU, case)


@check()
def bleu_of_a_corpus_against_itself_is_one(student, ctx):
    """BLEU-1..max_n of a corpus scored against references that include each candidate is 1."""

    @PUBLIC
    @given(bleu_self_corpus(max_sentences=4))
    def prop(corpus):
        hyps, refs, max_n = corpus
        case = _describe(hyps, refs, max_n)
        _expect_scores(
            "corpus_bleu of a corpus against itself",
            _corpus_bleu(student, hyps, refs, max_n, case),
            [1.0] * max_n,
            BLEU,
            case,
        )

    prop()
    expect_scores_depend_on_the_captions(student, "a corpus against itself")


def _brevity(student, corpus, expected: list[float]):
    """corpus_bleu on a corpus where every p_n = 1, against `expected` (the brevity penalty, max_n times: golden
    data, or the reference's in the grader's round). The message names c and the r that this penalty means."""
    hyps, refs, max_n = corpus
    c, bp = sum(len(h.split()) for h in hyps), expected[0]
    lengths = f"c = {c} > r" if bp == 1.0 else f"c = {c}, r = {round(c * (1 - math.log(bp)))}"
    case = f"{_describe(hyps, refs, max_n)}; every p_n = 1, {lengths}"
    _expect_scores(
        f"corpus_bleu = BP ({'c > r: 1' if bp == 1.0 else 'c <= r: exp(1 - r/c)'})",
        _corpus_bleu(student, hyps, refs, max_n, case),
        expected,
        BLEU,
        case,
    )


@check()
def brevity_penalty_uses_the_closest_reference_lengths(student, ctx):
    """With every p_n = 1, BLEU-N is the brevity penalty: 1 if c > r, else exp(1 - r/c), r the closest lengths."""
    now = current_round()
    if now.public:
        for corpus, expected in zip(BREVITY_CASES, _golden("brevity")):
            _brevity(student, corpus, expected)
        return

    @FEW
    @given(bleu_brevity_corpus(max_n=3, max_sentences=3))
    def graders(corpus):
        assume(not has_length_tie(*corpus[:2]))
        _brevity(student, corpus, now.reference("bleu").corpus_bleu(*corpus))

    graders()


@check()
def closest_length_ties_go_to_the_shorter_reference(student, ctx):
    """When two references are equally close in length, r counts the shorter one, whatever their order."""
    now = current_round()
    if now.public:
        for corpus, expected in zip(TIE_CASES, _golden("ties")):
            _brevity(student, corpus, expected)
        # r < c wherever a tie decides r, so BP = 1 in most of these cases: a constant 1 must not pass
        expect_scores_depend_on_the_captions(student, "the closest-length ties")
        return

    @FEW
    @given(bleu_brevity_corpus(max_n=4, max_sentences=4, tie=True))
    def graders(corpus):
        _brevity(student, corpus, now.reference("bleu").corpus_bleu(*corpus))

    graders()
    expect_scores_depend_on_the_captions(student, "the closest-length ties")


# (what the case shows, hyps, refs, max_n or None for the default 4, k): corpora where p_k = 0 (worked out by hand),
# or c = 0 (k = 1).
ZEROS = (
    (
        "the scene read from the other object (lecture): no shared 4-gram, so p_4 = 0",
        ["a red circle above a blue square"],
        [["a blue square below a red circle"]],
        None,
        4,
    ),
    (
        "Papineni's clipping: no candidate bigram is in a reference, so p_2 = 0",
        ["the the the the the the the"],
        [CAT_REFS],
        2,
        2,
    ),
    (
        "no candidate has 3 words, so the corpus has no 3-grams: p_3 = 0",
        ["a red", "a"],
        [["a red circle"], ["a blue square"]],
        3,
        3,
    ),
    ("an empty candidate: c = 0", [""], [["a red circle"]], None, 1),
)


def _check_zeros(
    student, hyps: list[str], refs: list[list[str]], max_n: int | None, zero_from: int, what: str = ""
) -> None:
    """BLEU-k .. BLEU-max_n are exactly 0 (k = zero_from, known by construction: c = 0, or p_k = 0 while p_1 ..
    p_(k-1) > 0) and BLEU-1 .. BLEU-(k-1) > 0."""
    top = 4 if max_n is None else max_n
    empty = not any(h.split() for h in hyps)
    case = (
        f"{what}; {_describe(hyps, refs, max_n)}"
        if what
        else f"{_describe(hyps, refs, max_n)}; " + ("c = 0" if empty else f"p_{zero_from} = 0")
    )
    got = _corpus_bleu(student, hyps, refs, max_n, case)
    rule = (
        "BLEU-N is 0 for every N when the candidates have no words at all, c = 0"
        if empty
        else f"BLEU-N is 0 as soon as some p_n with n <= N is 0, so BLEU-{zero_from} .. BLEU-{top} are exactly 0, "
        f"no smoothing"
    )
    _expect_scores(
        f"corpus_bleu ({rule})", got[zero_from - 1 :], [0.0] * (top - zero_from + 1), BLEU_ZERO, case, first=zero_from
    )
    for n in range(1, zero_from):
        positive = f"p_1 .. p_{n} are" if n > 1 else "p_1 is"
        expect(
            got[n - 1] > 0,
            f"corpus_bleu: BLEU-{n} is {got[n - 1]}, but {positive} positive: a zero "
            f"p_{zero_from} makes BLEU-{zero_from} and above 0, never a lower order",
            case,
        )


@check()
def bleu_is_zero_when_a_precision_is_zero_or_c_is_zero(student, ctx):
    """BLEU-N is 0 when some p_n (n <= N) is 0 or c = 0, while the lower orders stay positive."""
    if current_round().public:
        for what, hyps, refs, max_n, zero_from in ZEROS:
            _check_zeros(student, hyps, refs, max_n, zero_from, what)

    def run(kind):
        @FEW
        @given(bleu_zero_corpus(kind))
        def prop(corpus):
            hyps, refs, max_n, k = corpus
            _check_zeros(student, hyps, refs, max_n, 1 if kind == "empty" else k)

        prop()

    for kind in ("crossed", "short", "empty"):  # p_k = 0 by crossed runs, no k-grams at all, c = 0
        run(kind)
