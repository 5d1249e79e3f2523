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
(RTOL, ATOL) that allow rounding only: a score that must be 0 must be 0, and a smoothing constant in place of it
fails (the zero conventions' check).
(The part's hidden checks, against the reference, nltk and pycocoevalcap, run in the grader after the deadline.)"""

from __future__ import annotations

import math

from hypothesis import assume, given
from hypothesis import strategies as st

from autograder.public import golden, limits
from autograder.public.checks import check, current_round
from autograder.public.client import StudentError
from autograder.public.compare import CheckFailed, expect
from autograder.public.strategies import (
    FEW,
    bleu_brevity_corpus,
    bleu_corpus,
    bleu_self_corpus,
    bleu_sentence,
    bleu_words,
    bleu_zero_corpus,
)

RTOL, ATOL = 1e-9, 1e-12  # against the reference or a closed form: only log/exp/pow rounding differs (~1e-15)
# The case count of these properties (FEW). Hypothesis derives a derandomised property's cases from its source text,
# decorators included: under another name here, every case these checks have always drawn would change.
PUBLIC = FEW
CAT_REFS = ["the cat is on the mat", "there is a cat on the mat"]


# -- calling the student's code (one case per call, so a raised error names its case) -----------------


def _call(student, recipe: str, case: str, **kwargs):
    try:
        return student.call(f"bleu.{recipe}", timeout=limits.LIMITS.bleu_call, **kwargs)
    except StudentError as exc:  # the same verdict, naming the case in the check's words
        exc.case = case
        raise


def _ngram_counts(student, tokens: list[str], n: int, case: str) -> dict:
    """The student's ngram_counts as a dict {n-gram tuple: count} (zero counts dropped), after type checks."""
    out = _call(student, "ngram_counts", case, tokens=tokens, n=n)
    expect(out["is_counter"], f"ngram_counts: expected a collections.Counter, got {out['type']}", case)
    got = {}
    for key, (count_type, count) in out["items"]:
        expect(
            isinstance(key, tuple) and len(key) == n and all(isinstance(w, str) for w in key),
            f"ngram_counts: every key must be a tuple of {n} words, got the key {key!r}",
            case,
        )
        expect(isinstance(count, int), f"ngram_counts: the count of {key!r} is a {count_type}, expected an int", case)
        if count != 0:
            got[key] = count
    return got


def _clipped_counts(student, hyp: list[str], refs: list[list[str]], n: int, case: str) -> tuple[int, int]:
    out = _call(student, "clipped_counts", case, hyp=hyp, refs=refs, n=n)
    expect(
        out["is_tuple"] and len(out["items"]) == 2,
        f"clipped_counts: expected a tuple (matches, total), got {out['type']}"
        + (f" of length {len(out['items'])}" if out["items"] is not None else ""),
        case,
    )
    for name, (type_name, value) in zip(("matches", "total"), out["items"]):
        expect(isinstance(value, int), f"clipped_counts: {name} is a {type_name}, expected an int", case)
    return out["items"][0][1], out["items"][1][1]


def _corpus_bleu(student, hyps: list[str], refs: list[list[str]], max_n: int | None, case: str) -> list[float]:
    """The student's corpus_bleu as a list of floats, after type, length and finiteness checks. Every score is a
    Python float, as the docstring says: an int (a 0 written as 0 rather than 0.0) is refused."""
    out = _call(student, "corpus_bleu", case, hyps=hyps, refs=refs, max_n=max_n)
    want = 4 if max_n is None else max_n
    expect(out["is_list"], f"corpus_bleu: expected a list of {want} floats, got {out['type']}", case)
    expect(
        len(out["items"]) == want,
        f"corpus_bleu: expected a list of {want} floats (BLEU-1 .. BLEU-{want}), got {len(out['items'])} values",
        case,
    )
    scores = []
    for i, (type_name, value) in enumerate(out["items"]):
        expect(
            isinstance(value, float),
            f"corpus_bleu: BLEU-{i + 1} is a{'n' if type_name[0] in 'aeiou' else ''} "
            f"{type_name}" + (f" ({value})" if value is not None else "") + ", expected a float",
            case,
        )
        expect(math.isfinite(value), f"corpus_bleu: BLEU-{i + 1} is {value}, expected a finite number", case)
        scores.append(float(value))
    return scores


def _expect_scores(
    what: str, got: list[float], expected: list[float], rtol: float, atol: float, case: str, first: int = 1
) -> None:
    """|got - expected| <= atol + rtol |expected| for every BLEU-N (got[0] is BLEU-`first`); the message names
    the worst N."""
    errors = [abs(g - e) - (atol + rtol * abs(e)) for g, e in zip(got, expected)]
    worst = max(range(len(errors)), key=errors.__getitem__)
    expect(
        errors[worst] <= 0,
        f"{what}: BLEU-{worst + first} is {got[worst]:.12g}, expected {expected[worst]:.12g} (error "
        f"{abs(got[worst] - expected[worst]):.3g}, rtol={rtol:g}, atol={atol:g}); got {_fmt(got)}, expected "
        f"{_fmt(expected)}",
        case,
    )


def _fmt(scores: list[float]) -> str:
    return "[" + ", ".join(f"{s:.6g}" for s in scores) + "]"


def _describe(hyps, refs, max_n=None) -> str:
    return f"hyps={hyps!r}, refs={refs!r}" + ("" if max_n is None else f", max_n={max_n}")


# The anchor of every property that a constant satisfies (invariance under reordering or respacing, a corpus against
# itself, inputs left unchanged): scores that do not depend on the captions fail it, and so do scores that depend on
# them without being BLEU (a hash of the words), while every real bug passes it (no zero, no length tie, no repeated
# n-gram beyond its reference's count, c = r: BLEU-1 is p_1 by every convention).
ANCHOR_SELF = (list(CAT_REFS), [list(CAT_REFS), CAT_REFS[::-1]], 4)  # every p_n = 1, c = r: [1, 1, 1, 1]
ANCHOR_OTHER = (["a red circle above a blue square"], [["a blue square below a red circle"]], 1)  # p_1 = 6/7
ANCHOR_OTHER_BLEU_1 = 6 / 7
OTHER_WORDS = ("zebra", "kite", "lamp")  # words no caption of the kit's scenes holds


def one_word_replaced(words: list[str]) -> tuple[list[str], list[list[str]], float] | None:
    """An anchor corpus made of `words` (a drawn caption's): one candidate, its distinct words in order, against one
    reference of the same words in reverse order with the first replaced by a word the candidate lacks, and its
    BLEU-1, p_1 = (k - 1) / k for k distinct words (c = r, no word repeated: the same by every convention). None for
    fewer than two distinct words."""
    distinct = list(dict.fromkeys(words))
    if len(distinct) < 2:
        return None
    other = next(w for w in OTHER_WORDS if w not in distinct)
    reference = [other, *distinct[::-1][1:]]
    return [" ".join(distinct)], [[" ".join(reference)]], (len(distinct) - 1) / len(distinct)


def expect_scores_depend_on_the_captions(student, what: str, drawn: list[str] | None = None) -> None:
    """corpus_bleu gives 1 at every order to a corpus against itself and BLEU-1 = p_1 to a candidate that shares
    some words with its reference (a fixed case, and one made of the words of a drawn caption `drawn` where the
    check draws its cases): the scores of a property (`what`) mean nothing unless they are BLEU's."""
    hyps, refs, max_n = ANCHOR_SELF
    case = f"the anchor of {what}: a corpus against itself; {_describe(hyps, refs, max_n)}"
    itself = _corpus_bleu(student, hyps, refs, max_n, case)
    _expect_scores("corpus_bleu of a corpus against itself", itself, [1.0] * max_n, RTOL, ATOL, case)
    anchors = [(*ANCHOR_OTHER[:2], ANCHOR_OTHER_BLEU_1, "6 of 7 words in the reference")]
    made = one_word_replaced(drawn or [])
    if made is not None:
        anchors.append((*made, "every word but one in the reference"))
    for hyps, refs, p_1, how in anchors:
        case = f"the anchor of {what}: {how}; {_describe(hyps, refs, 1)}"
        other = _corpus_bleu(student, hyps, refs, 1, case)
        expect(
            abs(other[0] - p_1) <= ATOL + RTOL * p_1,
            f"corpus_bleu: BLEU-1 is {other[0]:.12g}, expected p_1 = "
            f"{p_1:.12g} (c = r, so the brevity penalty is 1): your scores are not BLEU's",
            case,
        )


def has_length_tie(hyps: list[str], refs: list[list[str]]) -> bool:
    """Some candidate has two references of different lengths equally close to its own: the one case where the
    closest-length tie convention decides r. Every check but closest_length_ties_go_to_the_shorter_reference
    leaves such corpora out, so that one convention costs the points of one check."""
    for hyp, rs in zip(hyps, refs):
        c = len(hyp.split())
        distances = {}
        for ref in rs:
            distances.setdefault(abs(len(ref.split()) - c), set()).add(len(ref.split()))
        if len(distances[min(distances)]) > 1:
            return True
    return False


def decided_by_a_convention(hyps: list[str], refs: list[list[str]], max_n: int | None, reference) -> bool:
    """c = 0 or some p_n = 0 (n <= max_n): a corpus where a zero convention decides a score, which is where the
    reference's BLEU-max_n is 0 (`reference`: the module solutions.bleu; the grader's round and the hidden checks
    only). Every check but bleu_is_zero_when_a_precision_is_zero_or_c_is_zero leaves such corpora out, so that a wrong
    convention costs the points of that one check."""
    return reference.corpus_bleu(hyps, refs, 4 if max_n is None else max_n)[-1] == 0.0


def _check_ngram_counts(student, tokens, n, expected: dict):
    """The student's ngram_counts(tokens, n) against `expected` ({n-gram tuple: count}, the reference's)."""
    case = f"tokens={tokens!r}, n={n}"
    got = _ngram_counts(student, tokens, n, case)
    wrong = sorted(set(got) | set(expected), key=lambda g: (g not in expected, g))
    wrong = [g for g in wrong if got.get(g, 0) != expected.get(g, 0)]
    if wrong:
        g = wrong[0]
        raise CheckFailed(
            f"ngram_counts: {len(wrong)} n-gram(s) counted wrong; {g!r} counted {got.get(g, 0)} times, "
            f"it occurs {expected.get(g, 0)} times (expected {dict(expected)}) [{case}]"
        )


def _check_clipped(student, hyp, refs, n, expected: tuple[int, int]):
    """The student's clipped_counts(hyp, refs, n) against `expected` (matches, total), the reference's."""
    case = f"hyp={hyp!r}, refs={refs!r}, n={n}"
    got = _clipped_counts(student, hyp, refs, n, case)
    matches, total = expected
    expect(got[1] == total, f"clipped_counts: total {got[1]}, but the candidate has {total} {n}-grams", case)
    expect(
        got[0] == matches,
        f"clipped_counts: matches {got[0]}, expected {matches} (each {n}-gram credited at most "
        f"as often as it occurs in the one reference that has it most often)",
        case,
    )


# -- the fixed public cases whose expected values are golden data ----------------------------------------------
# Each list: the worked examples first, then small random cases (the ones these checks drew before their answers
# became golden data). Change a case and run `python -m instructor golden`: the golden file carries a fingerprint
# of these lists, and a stale one fails its checks with one line.

NGRAM_CASES = (  # (tokens, n)
    ("a red circle above a red square".split(), 2),  # the docstring's example: (a, red) twice
    ([], 1),
    (["a"], 1),
    (["circle", "a", "blue", "a", "a", "a"], 1),
    (["a", "blue", "red", "blue", "blue", "blue", "circle"], 3),
    (["blue", "red", "a", "red"], 2),
    ([], 4),
    (["circle"], 3),
    (["red", "blue", "blue"], 1),
    (["blue"], 3),
    (["red"], 3),
)
_CAT = [r.split() for r in CAT_REFS]
CLIPPED_CASES = (  # (hyp, refs, n)
    ("the the the the the the the".split(), _CAT, 1),  # Papineni's example: (2, 7)
    ("the cat the cat".split(), _CAT, 1),  # the: min(2, 2) -> 2; cat: min(2, 1) -> 1
    ("the cat is on the mat".split(), _CAT, 2),  # (5, 5)
    ("the cat".split(), _CAT, 3),  # shorter than n: (0, 0)
    (["a", "a", "a"], [["a", "a"], ["a", "b", "a"]], 1),  # the most in one reference (2), not the sum (4)
    (["a"], [["a"]], 1),
    (["blue"], [["blue"]], 1),
    ([], [["blue", "blue", "a"], ["a", "blue", "a", "red"]], 3),
    (
        ["a", "red", "a", "blue", "a", "blue"],
        [["red", "blue", "red", "a"], ["a", "red", "a", "a", "a", "blue"], ["a", "red", "a", "blue", "a", "a"]],
        3,
    ),
    (["red"], [["blue", "red", "a", "red", "blue"]], 1),
    (["blue", "blue", "blue", "red", "blue"], [["red"]], 1),
    (["blue", "blue"], [["blue", "a", "blue", "red"], ["red"], ["a", "a"]], 2),
    (["blue"], [["blue", "red"]], 2),
    (
        ["red", "red", "blue", "a", "red", "blue"],
        [["red", "red", "blue", "blue", "a", "a"], ["blue", "red", "red", "blue", "blue", "red"]],
        3,
    ),
    (
        ["blue", "a", "a", "blue", "red", "blue"],
        [["blue", "blue"], ["blue"], ["blue", "a", "a", "blue", "red", "blue"]],
        1,
    ),
)
# (hyps, refs, max_n): every candidate is a run of at least max_n words inside one of its references, so every
# p_n = 1 and BLEU-N is the brevity penalty alone (autograder.public.strategies.bleu_brevity_corpus); no length ties.
BREVITY_CASES = (
    (["a"], [["a"]], 1),
    (["a a"], [["a a"]], 2),
    (
        ["a blue blue a circle", "circle square a above circle red red", "blue square square"],
        [
            [
                "a blue above square blue square a circle",
                "circle a square blue above above square red square a square blue",
                "circle a blue blue a circle above circle above square",
            ],
            ["circle square a above circle red red red circle blue"],
            ["blue square square red", "a circle a"],
        ],
        1,
    ),
    (
        ["above red red", "blue a square square a blue circle"],
        [
            ["above above square above red red blue above circle above"],
            ["square above blue a square square a blue circle a above"],
        ],
        1,
    ),
    (["square", "a"], [["circle above a", "circle", "red a above above square"], ["a a blue circle a circle"]], 1),
    (
        [
            "blue a above above circle above circle",
            "above above red circle red square circle",
            "red above a blue a circle blue",
        ],
        [
            [
                "square above circle a a above square square red blue circle red",
                "blue a above above circle above circle",
            ],
            [
                "red above above a a",
                "circle blue above blue above above red circle red square circle a square",
                "blue blue blue blue a square",
            ],
            ["red above a blue a circle blue", "a above circle square blue a circle red circle square blue square"],
        ],
        1,
    ),
    (
        ["red circle a", "a circle above a circle blue"],
        [
            ["circle circle blue above red circle a red"],
            [
                "square red red square above blue red square red circle red a",
                "blue a red square red a square above a",
                "a circle above a circle blue a square square red",
            ],
        ],
        3,
    ),
    (
        ["square red blue square above a", "above above square red red", "red blue blue above red"],
        [
            ["a circle blue square red blue square above a circle"],
            ["blue above red circle", "above", "circle above above square red red red square circle blue"],
            ["red blue blue above red a"],
        ],
        3,
    ),
    (
        ["blue", "blue", "a"],
        [
            ["blue"],
            [
                "red a red circle circle circle",
                "blue",
                "square above red above blue a circle square blue blue red circle",
            ],
            ["square a blue square"],
        ],
        1,
    ),
    (["red a square circle red circle blue"], [["a above square red a square circle red circle blue a"]], 1),
)
# The same, where some candidate has two references equally close in length (the tie convention decides r).
TIE_CASES = (
    (["a a"], [["a a a", "a"]], 1),
    (["a a a a"], [["a a a a a", "a a a"]], 4),
    (["circle circle blue blue above a"], [["above red a", "circle circle circle blue blue above a circle square"]], 4),
    (["a blue square blue red"], [["above a red blue a blue square blue red", "blue"]], 2),
    (
        [
            "red circle circle",
            "square blue red red",
            "red above circle a red",
            "red red blue circle square circle blue",
        ],
        [
            ["red", "above square red circle circle"],
            ["circle blue red", "square blue red red red"],
            ["red above circle a red red blue red a", "above"],
            ["square blue red red blue circle square circle blue", "red blue red blue red"],
        ],
        2,
    ),
    (
        ["above red a", "red red above above square blue red", "a blue blue a blue above a"],
        [
            ["above red a square a", "a"],
            ["above", "circle blue red red red above above square blue red square blue above"],
            ["a blue blue a blue above a square", "square a red circle circle blue"],
        ],
        3,
    ),
    (
        [
            "circle circle a red above above above",
            "circle square circle circle square square a",
            "a above red a red circle blue",
            "blue blue blue square blue",
        ],
        [
            ["red red blue", "a red circle circle circle a red above above above square"],
            ["red circle circle square circle circle square square a circle above", "above square above"],
            ["blue a above red a red circle blue", "red blue a above square a"],
            ["above blue blue blue square blue", "a a red a"],
        ],
        1,
    ),
    (
        ["square square circle a circle circle circle", "a red a above blue above a"],
        [
            ["above square", "square blue square square circle a circle circle circle above a blue"],
            ["square a a above blue", "a above a red a above blue above a"],
        ],
        1,
    ),
    (["above a a circle"], [["a above circle", "above a a circle a"]], 2),
    (
        ["above circle", "above a above", "red a blue a square red red", "above blue"],
        [
            ["above", "red above circle"],
            ["above", "a above a above above"],
            ["red a blue a square red red circle red", "square circle red a a"],
            ["above blue circle", "square"],
        ],
        1,
    ),
)


def golden_cases(reference) -> dict[str, list]:
    """This part's golden data, computed with `reference` (the module solutions.bleu; python -m instructor golden):
    the n-gram counts as [[n-gram words, count], ...], the clipped counts as [matches, total], the brevity cases'
    BLEU-1 .. BLEU-max_n."""
    return {
        "ngram_counts": [
            [[list(g), c] for g, c in reference.ngram_counts(tokens, n).items()] for tokens, n in NGRAM_CASES
        ],
        "clipped_counts": [list(reference.clipped_counts(hyp, refs, n)) for hyp, refs, n in CLIPPED_CASES],
        "brevity": [reference.corpus_bleu(*case) for case in BREVITY_CASES],
        "ties": [reference.corpus_bleu(*case) for case in TIE_CASES],
    }


def _golden(name: str) -> list:
    return golden.load("bleu", FINGERPRINT)[name]


def _counter(pairs: list) -> dict:
    return {tuple(words): count for words, count in pairs}


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
    @given(bleu_words(4, 0, 7), st.integers(1, 4))
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
    @given(bleu_sentence(vocab=3, max_words=6), st.integers(1, 3))
    def graders(sentence, n):
        _check_clipped(student, *sentence, n, now.reference("bleu").clipped_counts(*sentence, n))

    graders()


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
        @given(bleu_corpus(max_sentences=4, min_words=1), st.one_of(st.none(), st.integers(1, 4)))
        def graders(corpus, max_n):
            hyps, refs = corpus
            assume(
                not has_length_tie(hyps, refs) and not decided_by_a_convention(hyps, refs, max_n, now.reference("bleu"))
            )
            expected = now.reference("bleu").corpus_bleu(hyps, refs, *(() if max_n is None else (max_n,)))
            case = _describe(hyps, refs, max_n)
            _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, RTOL, ATOL, case)

        graders()
        return
    for what, hyps, refs, max_n, expected in WORKED:
        case = f"{what}; {_describe(hyps, refs, max_n)}"
        _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, RTOL, ATOL, case)


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
            RTOL,
            ATOL,
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
        RTOL,
        ATOL,
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
        f"corpus_bleu ({rule})", got[zero_from - 1 :], [0.0] * (top - zero_from + 1), 0.0, ATOL, case, first=zero_from
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


FINGERPRINT = golden.fingerprint(NGRAM_CASES, CLIPPED_CASES, BREVITY_CASES, TIE_CASES, golden_cases)
