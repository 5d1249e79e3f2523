"""Part 3 checks: BLEU from scratch. Expected values come from closed forms (a corpus against itself, the
brevity penalty when every p_n = 1), from collections.Counter over zipped n-grams, from the reference
(solutions/bleu.py) and from nltk and pycocoevalcap where their conventions coincide with the spec's
(docs/bleu.md), never from the student's own output. Counts are exact integers, so BLEU values are compared
with a tight rtol plus an atol floor that also absorbs a tiny smoothing constant in place of an exact 0."""
from __future__ import annotations

import math
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from autograder.public.checks import check
from autograder.public.compare import CheckFailed, expect
from autograder.public.client import StudentError
from autograder.public.strategies import (FEW, MORE, PROPERTY, bleu_brevity_corpus, bleu_corpus, bleu_margins,
                                          bleu_oracle_corpus, bleu_reorderable_corpus, bleu_self_corpus, bleu_sentence,
                                          bleu_separators, bleu_words, bleu_zero_corpus, examples)
from solutions import bleu as reference

CALL_TIMEOUT = 10.0          # seconds per call: each call scores a handful of short captions
RTOL, ATOL = 1e-9, 1e-12     # against the reference or a closed form: only log/exp/pow rounding differs (~1e-15)
NLTK_RTOL, NLTK_ATOL = 1e-9, 1e-12   # nltk counts exactly too (docs/bleu.md measured 2e-16)
COCO_RTOL, COCO_ATOL = 1e-7, 1e-9    # pycocoevalcap adds 1e-15 / 1e-9 to counts and lengths (docs/bleu.md: 2e-9)
CAT_REFS = ["the cat is on the mat", "there is a cat on the mat"]


# -- calling the student's code (one case per call, so a raised error names its case) -----------------

def _call(student, recipe: str, case: str, **kwargs):
    try:
        return student.call(f"bleu.{recipe}", timeout=CALL_TIMEOUT, **kwargs)
    except StudentError as exc:  # re-raised as the same verdict, with the case that raised it
        raise StudentError(exc.kind, f"{exc.detail} [{case}]", exc.where) from None


def _ngram_counts(student, tokens: list[str], n: int, case: str) -> dict:
    """The student's ngram_counts as a dict {n-gram tuple: count} (zero counts dropped), after type checks."""
    out = _call(student, "ngram_counts", case, tokens=tokens, n=n)
    expect(out["is_counter"], f"ngram_counts: expected a collections.Counter, got {out['type']}", case)
    got = {}
    for key, (count_type, count) in out["items"]:
        expect(isinstance(key, tuple) and len(key) == n and all(isinstance(w, str) for w in key),
               f"ngram_counts: every key must be a tuple of {n} words, got the key {key!r}", case)
        expect(isinstance(count, int), f"ngram_counts: the count of {key!r} is a {count_type}, expected an int", case)
        if count != 0:
            got[key] = count
    return got


def _clipped_counts(student, hyp: list[str], refs: list[list[str]], n: int, case: str) -> tuple[int, int]:
    out = _call(student, "clipped_counts", case, hyp=hyp, refs=refs, n=n)
    expect(out["is_tuple"] and len(out["items"]) == 2,
           f"clipped_counts: expected a tuple (matches, total), got {out['type']}"
           + (f" of length {len(out['items'])}" if out["items"] is not None else ""), case)
    for name, (type_name, value) in zip(("matches", "total"), out["items"]):
        expect(isinstance(value, int), f"clipped_counts: {name} is a {type_name}, expected an int", case)
    return out["items"][0][1], out["items"][1][1]


def _corpus_bleu(student, hyps: list[str], refs: list[list[str]], max_n: int | None, case: str) -> list[float]:
    """The student's corpus_bleu as a list of floats, after type, length and finiteness checks.
    An int (a 0 written as 0 rather than 0.0) is accepted as a number."""
    out = _call(student, "corpus_bleu", case, hyps=hyps, refs=refs, max_n=max_n)
    want = 4 if max_n is None else max_n
    expect(out["is_list"], f"corpus_bleu: expected a list of {want} floats, got {out['type']}", case)
    expect(len(out["items"]) == want, f"corpus_bleu: expected a list of {want} floats (BLEU-1 .. BLEU-{want}), "
           f"got {len(out['items'])} values", case)
    scores = []
    for i, (type_name, value) in enumerate(out["items"]):
        expect(value is not None, f"corpus_bleu: BLEU-{i + 1} is a {type_name}, expected a float", case)
        expect(math.isfinite(value), f"corpus_bleu: BLEU-{i + 1} is {value}, expected a finite number", case)
        scores.append(float(value))
    return scores


def _expect_scores(what: str, got: list[float], expected: list[float], rtol: float, atol: float, case: str,
                   first: int = 1) -> None:
    """|got - expected| <= atol + rtol |expected| for every BLEU-N (got[0] is BLEU-`first`); the message names
    the worst N."""
    errors = [abs(g - e) - (atol + rtol * abs(e)) for g, e in zip(got, expected)]
    worst = max(range(len(errors)), key=errors.__getitem__)
    expect(errors[worst] <= 0,
           f"{what}: BLEU-{worst + first} is {got[worst]:.12g}, expected {expected[worst]:.12g} (error "
           f"{abs(got[worst] - expected[worst]):.3g}, rtol={rtol:g}, atol={atol:g}); got {_fmt(got)}, expected "
           f"{_fmt(expected)}", case)


def _fmt(scores: list[float]) -> str:
    return "[" + ", ".join(f"{s:.6g}" for s in scores) + "]"


def _describe(hyps, refs, max_n=None) -> str:
    return f"hyps={hyps!r}, refs={refs!r}" + ("" if max_n is None else f", max_n={max_n}")


def _ngrams(words: list[str], n: int) -> Counter:
    """The oracle: n-grams by zipping n shifted copies of the caption."""
    return Counter(zip(*(words[i:] for i in range(n))))


def _clipped_oracle(hyp: list[str], refs: list[list[str]], n: int) -> tuple[int, int]:
    """The oracle: Counter union is the per-n-gram maximum over references, intersection the clipped minimum."""
    candidate, most = _ngrams(hyp, n), Counter()
    for ref in refs:
        most |= _ngrams(ref, n)
    return sum((candidate & most).values()), sum(candidate.values())


def _closest_lengths(hyps: list[str], refs: list[list[str]]) -> tuple[int, int]:
    """(c, r): candidate words, and the closest reference lengths summed, a tie going to the shorter."""
    c = sum(len(h.split()) for h in hyps)
    r = sum(min((abs(len(x.split()) - len(h.split())), len(x.split())) for x in rs)[1] for h, rs in zip(hyps, refs))
    return c, r


def _check_ngram_counts(student, tokens, n):
    case = f"tokens={tokens!r}, n={n}"
    got = _ngram_counts(student, tokens, n, case)
    expected = _ngrams(tokens, n)
    wrong = sorted(set(got) | set(expected), key=lambda g: (g not in expected, g))
    wrong = [g for g in wrong if got.get(g, 0) != expected.get(g, 0)]
    if wrong:
        g = wrong[0]
        raise CheckFailed(f"ngram_counts: {len(wrong)} n-gram(s) counted wrong; {g!r} counted {got.get(g, 0)} times, "
                          f"it occurs {expected.get(g, 0)} times (expected {dict(expected)}) [{case}]")


def _check_clipped(student, hyp, refs, n):
    case = f"hyp={hyp!r}, refs={refs!r}, n={n}"
    got = _clipped_counts(student, hyp, refs, n, case)
    matches, total = _clipped_oracle(hyp, refs, n)
    expect(got[1] == total, f"clipped_counts: total {got[1]}, but the candidate has {total} {n}-grams", case)
    expect(got[0] == matches, f"clipped_counts: matches {got[0]}, expected {matches} (each {n}-gram credited at most "
           f"as often as it occurs in the one reference that has it most often)", case)


# -- public checks ------------------------------------------------------------------------------------

@check(timeout=30)
def ngram_counts_is_the_counter_of_ngrams(student, ctx):
    """ngram_counts returns a Counter of every run of n words (n-gram tuples), empty when the caption is shorter."""
    @FEW
    @given(bleu_words(4, 0, 7), st.integers(1, 4))
    def prop(tokens, n):
        _check_ngram_counts(student, tokens, n)
    _check_ngram_counts(student, "a red circle above a red square".split(), 2)
    prop()


@check(timeout=30)
def clipped_counts_clip_at_the_most_in_one_reference(student, ctx):
    """clipped_counts credits each n-gram at most as often as one reference has it (Papineni: 2 of 7)."""
    cat = [r.split() for r in CAT_REFS]
    for hyp, refs, n in (("the the the the the the the", cat, 1),      # Papineni's example: (2, 7)
                         ("the cat the cat", cat, 1),                  # the: min(2, 2) -> 2; cat: min(2, 1) -> 1
                         ("the cat is on the mat", cat, 2),            # (5, 5)
                         ("the cat", cat, 3),                          # shorter than n: (0, 0)
                         ("a a a", [["a", "a"], ["a", "b", "a"]], 1)):  # the most in one reference (2), not the sum (4)
        _check_clipped(student, hyp.split(), refs, n)

    @FEW
    @given(bleu_sentence(vocab=3, max_words=6), st.integers(1, 3))
    def prop(sentence, n):
        _check_clipped(student, *sentence, n)
    prop()


# (what the case shows, hyps, refs, max_n or None for the default 4); expected values from the reference.
WORKED = (
    ("an identical caption (lecture): [1, 1, 1, 1]", ["the cat is on the mat"], [CAT_REFS], None),
    ("brevity penalty (lecture): c = 6, r = 10, every p_n = 1, BLEU-N = exp(1 - 10/6)",
     ["the cat is on the mat"], [["the cat is on the mat and it is asleep"]], None),
    ("the scene read from the other object (lecture): BLEU-1 = 6/7, no shared 4-gram so BLEU-4 = 0",
     ["a red circle above a blue square"], [["a blue square below a red circle"]], None),
    ("Papineni's clipping: p_1 = 2/7, p_2 = 0", ["the the the the the the the"], [CAT_REFS], 2),
    ("precision summed over the corpus: p_1 = (3 + 6) / (3 + 7), not the mean of 3/3 and 6/7",
     ["a red circle", "a blue square above a green triangle"],
     [["a red circle"], ["a green square above a blue circle"]], 1),
    ("a candidate shorter than n adds no n-grams: p_3 = 3/3, p_4 = 2/2, c = 7, r = 8",
     ["a red", "a red circle above a"], [["a red circle"], ["a red circle above a"]], None),
    ("an empty candidate: c = 0, so every BLEU-N is 0", [""], [["a red circle"]], None),
    ("closest reference length: r = 6 (of 3, 6 and 11), c = 5", ["a red circle above a"],
     [["a red circle", "a red circle above a square", "a red circle above a blue square left of a green triangle"]], 3),
)


@check(timeout=30)
def corpus_bleu_reproduces_the_worked_examples(student, ctx):
    """corpus_bleu gives the lecture's and the spec's worked values (clipping, corpus sums, brevity, zeros)."""
    for what, hyps, refs, max_n in WORKED:
        expected = reference.corpus_bleu(hyps, refs) if max_n is None else reference.corpus_bleu(hyps, refs, max_n)
        case = f"{what}; {_describe(hyps, refs, max_n)}"
        _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, RTOL, ATOL, case)


@check(timeout=30)
def bleu_of_a_corpus_against_itself_is_one(student, ctx):
    """BLEU-1..max_n of a corpus scored against references that include each candidate is 1."""
    @FEW
    @given(bleu_self_corpus(max_sentences=4))
    def prop(corpus):
        hyps, refs, max_n = corpus
        case = _describe(hyps, refs, max_n)
        _expect_scores("corpus_bleu of a corpus against itself", _corpus_bleu(student, hyps, refs, max_n, case),
                       [1.0] * max_n, RTOL, ATOL, case)
    prop()


def _brevity(student, corpus):
    hyps, refs, max_n = corpus
    c, r = _closest_lengths(hyps, refs)
    bp = 1.0 if c > r else math.exp(1 - r / c)
    case = f"{_describe(hyps, refs, max_n)}; every p_n = 1, c = {c}, r = {r}"
    _expect_scores(f"corpus_bleu = BP ({'c > r: 1' if c > r else 'c <= r: exp(1 - r/c)'})",
                   _corpus_bleu(student, hyps, refs, max_n, case), [bp] * max_n, RTOL, ATOL, case)


@check(timeout=30)
def brevity_penalty_uses_the_closest_reference_lengths(student, ctx):
    """With every p_n = 1, BLEU-N is the brevity penalty: 1 if c > r, else exp(1 - r/c), r the closest lengths."""
    @FEW
    @given(bleu_brevity_corpus(max_n=3, max_sentences=3))
    def prop(corpus):
        _brevity(student, corpus)
    prop()


# -- hidden checks ------------------------------------------------------------------------------------

@check(timeout=60)
def ngram_and_clipped_counts_on_random_captions(student, ctx):
    """ngram_counts and clipped_counts match their definitions on longer random captions."""
    @MORE
    @given(bleu_sentence(vocab=4, max_refs=4, max_words=12), st.integers(1, 5))
    def prop(sentence, n):
        hyp, refs = sentence
        _check_ngram_counts(student, hyp, n)
        _check_clipped(student, hyp, refs, n)
    prop()


@check(timeout=60)
def corpus_bleu_matches_the_definition(student, ctx):
    """corpus_bleu equals the reference on random corpora (clipped corpus sums, closest r, BLEU-1..max_n)."""
    @MORE
    @given(bleu_corpus(max_sentences=8), st.one_of(st.none(), st.integers(1, 6)))
    def prop(corpus, max_n):
        hyps, refs = corpus
        expected = reference.corpus_bleu(hyps, refs) if max_n is None else reference.corpus_bleu(hyps, refs, max_n)
        case = _describe(hyps, refs, max_n)
        _expect_scores("corpus_bleu", _corpus_bleu(student, hyps, refs, max_n, case), expected, RTOL, ATOL, case)
    prop()


@check(timeout=60)
def corpus_bleu_is_invariant_to_corpus_order(student, ctx):
    """Permuting the sentences (candidates with their references) or a sentence's references leaves BLEU unchanged."""
    corpora = bleu_reorderable_corpus()

    @PROPERTY
    @given(corpora, st.integers(1, 4), st.data())
    def prop(corpus, max_n, data):
        hyps, refs = corpus
        order = data.draw(st.permutations(range(len(hyps))))
        hyps2 = [hyps[i] for i in order]
        refs2 = [data.draw(st.permutations(refs[i])) for i in order]
        case = _describe(hyps, refs, max_n)
        first = _corpus_bleu(student, hyps, refs, max_n, case)
        again = _corpus_bleu(student, hyps2, refs2, max_n, f"the same corpus reordered: {_describe(hyps2, refs2)}")
        _expect_scores("corpus_bleu of the reordered corpus", again, first, RTOL, ATOL,
                       f"{case}; reordered: {_describe(hyps2, refs2)}")
    prop()


@check(timeout=60)
def closest_length_ties_go_to_the_shorter_reference(student, ctx):
    """When two references are equally close in length, r counts the shorter one, whatever their order."""
    @PROPERTY
    @given(bleu_brevity_corpus(max_n=4, max_sentences=4, tie=True))
    def prop(corpus):
        _brevity(student, corpus)
    prop()


@check(timeout=60)
def bleu_is_zero_when_a_precision_is_zero_or_c_is_zero(student, ctx):
    """BLEU-N is 0 when some p_n (n <= N) is 0 or c = 0, while the lower orders stay positive."""
    def run(kind):
        @examples(10)
        @given(bleu_zero_corpus(kind))
        def prop(corpus):
            check_zeros(*corpus)
        prop()

    def check_zeros(hyps, refs, max_n, k):
        expected = reference.corpus_bleu(hyps, refs, max_n)
        assert all(s == 0.0 for s in expected[k - 1:]) and all(s > 0 for s in expected[:k - 1]) or \
            not any(h.split() for h in hyps), "the zero-precision corpus is built wrong"
        empty = not any(h.split() for h in hyps)
        case = f"{_describe(hyps, refs, max_n)}; " + ("c = 0" if empty else f"p_{k} = 0")
        got = _corpus_bleu(student, hyps, refs, max_n, case)
        zero_from = 1 if empty else k
        _expect_scores(f"corpus_bleu (BLEU-{zero_from} and above must be 0)", got[zero_from - 1:],
                       [0.0] * (max_n - zero_from + 1), 0.0, ATOL, case, first=zero_from)
        for n in range(1, zero_from):
            expect(got[n - 1] > 0, f"corpus_bleu: BLEU-{n} is {got[n - 1]}, but p_1{f' .. p_{n}' if n > 1 else ''} "
                   f"{'are' if n > 1 else 'is'} positive", case)

    for kind in ("crossed", "short", "empty"):  # p_k = 0 by crossed runs, no k-grams at all, c = 0
        run(kind)


@check(timeout=60)
def corpus_bleu_agrees_with_nltk_and_pycocoevalcap(student, ctx):
    """BLEU-1..4 agree with nltk's corpus_bleu and pycocoevalcap's Bleu where their conventions coincide."""
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
    from pycocoevalcap.bleu.bleu import Bleu

    @PROPERTY
    @given(bleu_oracle_corpus())
    def prop(corpus):
        hyps, refs = corpus
        # where the conventions coincide (docs/bleu.md): every candidate has 4 words or more, every p_n > 0
        assert all(len(h.split()) >= 4 for h in hyps) and min(reference.corpus_bleu(hyps, refs)) > 0
        case = _describe(hyps, refs)
        got = _corpus_bleu(student, hyps, refs, 4, case)
        weights = [(1.0 / n,) * n for n in range(1, 5)]
        nltk = nltk_corpus_bleu([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps], weights=weights)
        _expect_scores("corpus_bleu against nltk's corpus_bleu", got, [float(x) for x in nltk],
                       NLTK_RTOL, NLTK_ATOL, case)
        coco, _ = Bleu(4).compute_score({i: list(rs) for i, rs in enumerate(refs)},
                                        {i: [h] for i, h in enumerate(hyps)}, verbose=0)
        _expect_scores("corpus_bleu against pycocoevalcap's Bleu", got, [float(x) for x in coco],
                       COCO_RTOL, COCO_ATOL, case)
    prop()


@check(timeout=60)
def captions_are_split_on_any_whitespace(student, ctx):
    """corpus_bleu splits captions with str.split(): runs of spaces, tabs, newlines and margins are one separator."""
    @PROPERTY
    @given(bleu_corpus(max_sentences=4), st.integers(1, 4), st.data())
    def prop(corpus, max_n, data):
        hyps, refs = corpus

        def spaced(caption: str) -> str:
            words = caption.split()
            seps = [data.draw(bleu_separators) for _ in words[1:]] + [""]
            lead, tail = data.draw(bleu_margins), data.draw(bleu_margins)
            return lead + "".join(w + s for w, s in zip(words, seps)) + tail
        hyps2, refs2 = [spaced(h) for h in hyps], [[spaced(r) for r in rs] for rs in refs]
        case = _describe(hyps, refs, max_n)
        plain = _corpus_bleu(student, hyps, refs, max_n, case)
        case2 = f"{_describe(hyps2, refs2, max_n)}; the same words as {case}"
        _expect_scores("corpus_bleu of the respaced corpus", _corpus_bleu(student, hyps2, refs2, max_n, case2), plain,
                       RTOL, ATOL, case2)
    prop()


@check(timeout=30)
def bleu_functions_leave_their_inputs_unchanged(student, ctx):
    """corpus_bleu, clipped_counts and ngram_counts do not modify the captions they are given."""
    hyps = ["a red circle above a red square", "a blue square", ""]
    refs = [["a red circle above a blue square", "a red square below a red circle"], ["a blue square"],
            ["a green triangle"]]
    case = _describe(hyps, refs, 3)
    out = _call(student, "inputs_unchanged", case, hyps=hyps, refs=refs, max_n=3, n=2)
    for name in ("corpus_bleu", "clipped_counts", "ngram_counts"):
        before, after = out[name]
        expect(after == before, f"{name} modified its inputs: before {before!r}, after {after!r}", case)
