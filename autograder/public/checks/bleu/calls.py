"""Part 3: calling the student's BLEU functions (one case per call, so a raised error names its case) and judging
what they return: the scores' comparison, the anchors every constant fails, the corpora a convention decides."""

from __future__ import annotations

import math

from autograder.public import limits
from autograder.public.client import StudentError
from autograder.public.compare import CheckFailed, Tolerance, expect
from autograder.public.tolerances import BLEU

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
    what: str, got: list[float], expected: list[float], tolerance: Tolerance, case: str, first: int = 1
) -> None:
    """|got - expected| <= atol + rtol |expected| for every BLEU-N (got[0] is BLEU-`first`), within `tolerance`; the
    message names the worst N."""
    rtol, atol = tolerance.rtol, tolerance.atol
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
    _expect_scores("corpus_bleu of a corpus against itself", itself, [1.0] * max_n, BLEU, case)
    anchors = [(*ANCHOR_OTHER[:2], ANCHOR_OTHER_BLEU_1, "6 of 7 words in the reference")]
    made = one_word_replaced(drawn or [])
    if made is not None:
        anchors.append((*made, "every word but one in the reference"))
    for hyps, refs, p_1, how in anchors:
        case = f"the anchor of {what}: {how}; {_describe(hyps, refs, 1)}"
        other = _corpus_bleu(student, hyps, refs, 1, case)
        expect(
            BLEU.accepts(other[0], p_1),
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
