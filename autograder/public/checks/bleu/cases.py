"""Part 3: the fixed public cases whose expected values are golden data (autograder/public/golden/bleu.pt), what
`python -m instructor golden` computes for them (golden_cases) and the fingerprint of their definitions."""

from __future__ import annotations

from autograder.public import golden
from autograder.public.checks.bleu.calls import CAT_REFS

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


FINGERPRINT = golden.fingerprint(NGRAM_CASES, CLIPPED_CASES, BREVITY_CASES, TIE_CASES, golden_cases)
