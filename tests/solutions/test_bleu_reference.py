"""The reference BLEU (solutions/bleu.py): hand-checked values and two independent implementations.

The hand-checked values are the lecture's (Papineni's clipping example, an identical caption, a
6-word candidate against a 10-word reference, a scene read from the other object) plus a few
computed by hand below. The oracles are nltk's `corpus_bleu` and pycocoevalcap's `Bleu`; they
agree with the kit only where their conventions coincide, see docs/bleu.md.
"""

from __future__ import annotations

import copy
import doctest
import math
import random

import pytest

try:
    from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
    from pycocoevalcap.bleu.bleu import Bleu as CocoBleu
except ImportError as err:  # the oracles are an install extra, not optional for this module
    raise ImportError(
        "tests/solutions/test_bleu_reference.py needs the BLEU oracles nltk and pycocoevalcap: pip install -e '.[oracles]'"
    ) from err

import solutions.bleu as bleu_module
from shared.vocab import FACT_WORDS
from solutions.bleu import clipped_counts, corpus_bleu, ngram_counts

WORDS = FACT_WORDS[3:]  # the 13 words every factual caption is built from
CAT_REFS = ["the cat is on the mat", "there is a cat on the mat"]
NLTK_REL, COCO_REL = 1e-12, 1e-8  # why these tolerances: docs/bleu.md


def nltk_bleu(hyps, refs, max_n=4):
    """nltk's corpus BLEU-1..max_n, uniform weights (1/n, ..., 1/n), no smoothing."""
    weights = [(1.0 / n,) * n for n in range(1, max_n + 1)]
    return nltk_corpus_bleu([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps], weights=weights)


def coco_bleu(hyps, refs):
    """pycocoevalcap's corpus BLEU-1..4 (its first return value; the second is per-sentence)."""
    score, _ = CocoBleu(4).compute_score(
        {i: list(rs) for i, rs in enumerate(refs)}, {i: [h] for i, h in enumerate(hyps)}, verbose=0
    )
    return score


def random_corpus(seed, mode, size=30):
    """A corpus from the 13-word vocabulary where the three BLEUs' conventions coincide.

    Each sentence has 1-3 random references of 4-9 words; the candidate is one of them after up to
    3 random edits: substitutions, and deletions ("shorter", so BP < 1), insertions ("longer") or
    both ("mixed"). No deletion takes a candidate below 4 words, so every candidate has a 4-gram.
    """
    rng = random.Random(seed)
    hyps, refs = [], []
    for _ in range(size):
        ref_list = [" ".join(rng.choices(WORDS, k=rng.randint(4, 9))) for _ in range(rng.randint(1, 3))]
        words = rng.choice(ref_list).split()
        for _ in range(rng.randint(0, 3)):
            op, i = rng.choice(["sub", mode]), rng.randrange(len(words))
            if op == "mixed":
                op = rng.choice(["shorter", "longer"])
            if op == "sub":
                words[i] = rng.choice(WORDS)
            elif op == "shorter" and len(words) > 4:
                del words[i]
            elif op == "longer":
                words.insert(i, rng.choice(WORDS))
        hyps.append(" ".join(words))
        refs.append(ref_list)
    return hyps, refs


# ----------------------------------------------------------------------------- hand-checked values


def test_ngram_counts():
    counts = ngram_counts("a red circle above a red square".split(), 2)
    assert counts[("a", "red")] == 2 and sum(counts.values()) == 6
    assert ngram_counts(["a", "red"], 3) == {}


def test_papineni_clipping():
    refs = [r.split() for r in CAT_REFS]
    assert clipped_counts("the the the the the the the".split(), refs, 1) == (2, 7)
    assert clipped_counts("the cat the cat".split(), refs, 1) == (3, 4)  # the: min(2, 2), cat: min(2, 1)


def test_identical_caption_scores_one():
    assert corpus_bleu(["the cat is on the mat"], [CAT_REFS]) == [1.0, 1.0, 1.0, 1.0]


def test_brevity_penalty_lecture():
    scores = corpus_bleu(["the cat is on the mat"], [["the cat is on the mat and it is asleep"]])
    assert scores[1] == pytest.approx(math.exp(1 - 10 / 6), rel=1e-12)  # c = 6, r = 10, all p_n = 1
    assert scores == pytest.approx([math.exp(1 - 10 / 6)] * 4, rel=1e-12)


def test_scene_read_from_the_other_object():
    scores = corpus_bleu(["a red circle above a blue square"], [["a blue square below a red circle"]])
    assert scores[0] == pytest.approx(6 / 7, rel=1e-12)  # every word but "above"; c = r = 7
    assert scores[3] == 0.0  # no shared 4-gram


def test_precision_is_summed_over_the_corpus():
    hyps = ["a red circle", "a blue square above a green triangle"]
    refs = [["a red circle"], ["a green square above a blue circle"]]
    # unigrams: 3/3 and 6/7; the corpus p_1 is 9/10, the per-sentence mean would be 13/14; c = r = 10
    assert corpus_bleu(hyps, refs, max_n=1) == [pytest.approx(9 / 10, rel=1e-12)]


def test_candidate_shorter_than_n_has_no_ngrams():
    hyps, refs = ["a red", "a red circle above a"], [["a red circle"], ["a red circle above a"]]
    # p_3 = (0 + 3) / (0 + 3) and p_4 = (0 + 2) / (0 + 2): "a red" adds nothing to either sum
    assert corpus_bleu(hyps, refs) == pytest.approx([math.exp(1 - 8 / 7)] * 4, rel=1e-12)  # c = 7, r = 8


def test_empty_hypothesis_scores_zero():
    assert corpus_bleu([""], [["a red circle"]]) == [0.0, 0.0, 0.0, 0.0]
    assert corpus_bleu(["", ""], [["a red circle"], ["a blue square"]], max_n=2) == [0.0, 0.0]


@pytest.mark.parametrize("order", [1, -1], ids=["short-first", "long-first"])
def test_closest_length_tie_goes_to_the_shorter_reference(order):
    hyp = "a red circle above a square"  # 6 words, references of 4 and 8 words: a tie
    refs = ["a red circle above", "a red circle left of a blue square"][::order]
    # p_1 = 6/6 (a: 2 in the long one; above: in the short one), p_2 = 3/5 (a red, red circle,
    # circle above), p_3 = 2/4 (a red circle, red circle above), p_4 = 1/3 (a red circle above).
    # The tie goes to r = 4 < c = 6, so BP = 1; the longer reference would give BP = exp(1 - 8/6).
    p = [1, 3 / 5, 2 / 4, 1 / 3]
    expected = [math.prod(p[:n]) ** (1 / n) for n in range(1, 5)]
    assert corpus_bleu([hyp], [refs]) == pytest.approx(expected, rel=1e-12)
    # all three implementations send the tie to the shorter reference
    assert nltk_bleu([hyp], [refs]) == pytest.approx(expected, rel=NLTK_REL)
    assert coco_bleu([hyp], [refs]) == pytest.approx(expected, rel=COCO_REL)


def test_docstring_examples():
    assert doctest.testmod(bleu_module).failed == 0


def test_inputs_are_not_modified():
    hyps, refs = random_corpus(0, "mixed", size=5)
    before = copy.deepcopy((hyps, refs))
    corpus_bleu(hyps, refs)
    clipped_counts(hyps[0].split(), [r.split() for r in refs[0]], 2)
    assert (hyps, refs) == before


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: corpus_bleu(["a red circle"], [["a red circle"], ["a"]]), ValueError, "hyps, refs"),
        (lambda: corpus_bleu([], []), ValueError, "hyps"),
        (lambda: corpus_bleu(["a red circle"], ["a red circle"]), TypeError, r"refs\[0\]"),
        (lambda: corpus_bleu(["a red circle"], [[]]), ValueError, r"refs\[0\]"),
        (lambda: corpus_bleu([["a", "red"]], [["a red"]]), TypeError, r"hyps\[0\]"),
        (lambda: corpus_bleu(["a"], [["a"]], max_n=0), ValueError, "max_n"),
        (lambda: ngram_counts("a red circle", 1), TypeError, "tokens"),
        (lambda: ngram_counts(["a"], 0), ValueError, "n"),
        (lambda: clipped_counts(["a"], [], 1), ValueError, "refs"),
        (lambda: clipped_counts(["a"], ["a"], 1), TypeError, r"refs\[0\]"),
    ],
)
def test_bad_inputs_name_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ----------------------------------------------------------------------------- oracles


@pytest.mark.parametrize("mode", ["mixed", "shorter", "longer"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_nltk_and_pycocoevalcap(seed, mode):
    hyps, refs = random_corpus(seed, mode)
    ours = corpus_bleu(hyps, refs)
    # where the conventions coincide: every candidate has >= 4 words and every p_n > 0
    assert all(len(h.split()) >= 4 for h in hyps) and min(ours) > 0
    assert ours == pytest.approx(nltk_bleu(hyps, refs), rel=NLTK_REL)
    assert ours == pytest.approx(coco_bleu(hyps, refs), rel=COCO_REL)


def test_where_the_oracles_differ():
    """The differences docs/bleu.md describes, pinned so that the page stays true."""
    # A zero 4-gram precision: 0 here, 1e-77 in nltk (with a warning), about 1e-4 in pycocoevalcap.
    hyps, refs = ["a red circle above a blue square"], [["a blue square below a red circle"]]
    with pytest.warns(UserWarning, match="0 counts of 4-gram"):
        assert 0 < nltk_bleu(hyps, refs)[3] < 1e-70
    assert coco_bleu(hyps, refs)[3] > 1e-5
    # A candidate shorter than n: nltk counts it as one n-gram (a denominator of at least 1).
    hyps, refs = ["a red", "a red circle above a"], [["a red circle"], ["a red circle above a"]]
    ours = corpus_bleu(hyps, refs)  # p_3 = 3/3 here, 3/4 in nltk
    assert nltk_bleu(hyps, refs)[2] == pytest.approx(ours[2] * (3 / 4) ** (1 / 3), rel=NLTK_REL)
    assert coco_bleu(hyps, refs) == pytest.approx(ours, rel=COCO_REL)
