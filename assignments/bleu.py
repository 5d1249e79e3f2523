"""Part 3: BLEU from scratch (Papineni et al., ACL 2002).

BLEU compares candidate captions with reference captions by counting the n-grams (runs of n
consecutive words) they share. It is a precision: of the n-grams a candidate produces, how many
are backed by a reference? Two rules stop a captioner from gaming it.

Clipping. Each candidate n-gram is credited at most as many times as it occurs in any single
reference. Repeating a safe word does not pay: "the the the the the the the" against
"the cat is on the mat" and "there is a cat on the mat" earns 2 unigram matches out of 7, not 7,
because no reference contains "the" more than twice.

Corpus-level precision. The clipped matches and the candidate n-gram totals are summed over the
whole corpus before dividing, p_n = (sum of matches) / (sum of candidate n-grams); BLEU does not
average per-sentence precisions. BLEU-N is the geometric mean of p_1 .. p_N, times the brevity
penalty; it is 0 as soon as one of those precisions is 0.

Brevity penalty. Precision alone favours short captions (say only the words you are sure of).
With c the total number of candidate words and r the sum, over sentences, of the length of the
reference closest in length to each candidate (on a tie, the shorter reference),
BP = 1 if c > r, else exp(1 - r / c). A corpus with no candidate words at all (c = 0) scores 0.

BLEU-1 mostly checks that the right words appear; BLEU-4 also checks that they come in the right
order. On our captions, "a red circle above a blue square" read against "a blue square below a
red circle" (the same scene, described from the other object) has BLEU-1 6/7 but BLEU-4 0.

Only `math` and `collections` are needed; captions are split on whitespace.
"""
# Generated from the reference bleu.py by `python -m instructor stubs`; do not edit by hand.
from __future__ import annotations

import math
from collections import Counter

__all__ = ["ngram_counts", "clipped_counts", "corpus_bleu"]


# ----------------------------------------------------------------------------- input checks (given)

def _check_order(name: str, n) -> None:
    """Raise unless `n` is an int >= 1 (an n-gram order or a maximum order)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name}: expected an int >= 1, got {type(n).__name__} {n!r}")
    if n < 1:
        raise ValueError(f"{name}: expected an int >= 1, got {n}")


def _check_tokens(name: str, tokens) -> None:
    """Raise unless `tokens` is a list (or tuple) of str: one caption already split into words."""
    if isinstance(tokens, str):
        raise TypeError(f"{name}: expected a list of words, got the str {tokens!r}; split it first (.split())")
    if not isinstance(tokens, (list, tuple)):
        raise TypeError(f"{name}: expected a list of words, got {type(tokens).__name__}")
    for word in tokens:
        if not isinstance(word, str):
            raise TypeError(f"{name}: expected a list of str, found {type(word).__name__} {word!r}")


def _check_references(name: str, refs, item_check) -> None:
    """Raise unless `refs` is a non-empty list (or tuple) whose items all pass `item_check`."""
    if isinstance(refs, str) or not isinstance(refs, (list, tuple)):
        raise TypeError(f"{name}: expected a non-empty list of references, got {type(refs).__name__} {refs!r}")
    if not refs:
        raise ValueError(f"{name}: expected a non-empty list of references, got an empty list")
    for j, ref in enumerate(refs):
        item_check(f"{name}[{j}]", ref)


def _check_caption(name: str, caption) -> None:
    """Raise unless `caption` is a str (a whole caption, not yet split)."""
    if not isinstance(caption, str):
        raise TypeError(f"{name}: expected a caption str, got {type(caption).__name__} {caption!r}")


def _check_corpus(hyps, refs) -> None:
    """Raise unless `hyps` is a non-empty list of str and `refs` a list of as many non-empty lists of str."""
    for name, value in (("hyps", hyps), ("refs", refs)):
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise TypeError(f"{name}: expected a list, got {type(value).__name__}")
    if len(hyps) != len(refs):
        raise ValueError(f"hyps, refs: expected one list of references per caption, "
                         f"got {len(hyps)} captions and {len(refs)} reference lists")
    if not hyps:
        raise ValueError("hyps: expected at least one caption, got an empty corpus")
    for i, (hyp, ref_list) in enumerate(zip(hyps, refs)):
        _check_caption(f"hyps[{i}]", hyp)
        _check_references(f"refs[{i}]", ref_list, _check_caption)


# ----------------------------------------------------------------------------- Part 3

def ngram_counts(tokens: list[str], n: int) -> Counter:
    """How often each n-gram occurs in one tokenised caption.

    Args:
        tokens: list[str], the words of one caption (e.g. `caption.split()`).
        n: int >= 1, the n-gram order.

    Returns:
        collections.Counter mapping each n-gram, a tuple of n words, to its number of
        occurrences. A caption with fewer than n words has no n-grams (an empty Counter).
        `tokens` is not modified.

    Example:
        >>> counts = ngram_counts("a red circle above a red square".split(), 2)
        >>> counts[("a", "red")], counts[("red", "circle")], sum(counts.values())
        (2, 1, 6)
        >>> ngram_counts(["a", "red"], 3)
        Counter()
    """
    _check_tokens("tokens", tokens)
    _check_order("n", n)
    # TODO (Part 3): implement ngram_counts
    raise NotImplementedError("Part 3 (bleu): ngram_counts is not implemented yet")


def clipped_counts(hyp: list[str], refs: list[list[str]], n: int) -> tuple[int, int]:
    """Clipped n-gram matches of one candidate against its references.

    Args:
        hyp: list[str], the candidate's words.
        refs: list[list[str]], one or more references, each a list of words.
        n: int >= 1, the n-gram order.

    Returns:
        (matches, total), two ints. `total` is the number of n-grams in `hyp`; `matches` counts
        them with each distinct n-gram credited at most as many times as it occurs in the single
        reference that contains it most often (the maximum over references, not the sum).
        So 0 <= matches <= total, and both are 0 when `hyp` has fewer than n words.
        The inputs are not modified.

    Example (Papineni et al.): "the" occurs at most twice in one reference, so 7 copies earn 2.
        >>> refs = ["the cat is on the mat".split(), "there is a cat on the mat".split()]
        >>> clipped_counts("the the the the the the the".split(), refs, 1)
        (2, 7)
        >>> clipped_counts("the cat is on the mat".split(), refs, 2)
        (5, 5)
    """
    _check_tokens("hyp", hyp)
    _check_references("refs", refs, _check_tokens)
    _check_order("n", n)
    # TODO (Part 3): implement clipped_counts
    raise NotImplementedError("Part 3 (bleu): clipped_counts is not implemented yet")


def corpus_bleu(hyps: list[str], refs: list[list[str]], max_n: int = 4) -> list[float]:
    """Corpus BLEU-1 .. BLEU-max_n of candidate captions against their references.

    Args:
        hyps: list[str] of length S, one candidate caption per sentence (words separated by
            whitespace; split with `str.split()`). A candidate may be empty ("").
        refs: list[list[str]] of length S; refs[i] is a non-empty list of reference captions
            (strings) for hyps[i].
        max_n: int >= 1, the highest n-gram order.

    Returns:
        list of max_n Python floats, [BLEU-1, ..., BLEU-max_n], each in [0, 1], where
        BLEU-N = BP * (p_1 * p_2 * ... * p_N) ** (1 / N) and
        - p_n = (sum over sentences of clipped n-gram matches) / (sum of candidate n-grams):
          corpus sums, not a mean of per-sentence precisions; p_n = 0 when the corpus has
          no candidate n-grams at all;
        - BP = 1 if c > r else exp(1 - r / c), with c the total number of candidate words and
          r the sum over sentences of the length of the reference closest in length to the
          candidate (on a tie, the shorter reference);
        - BLEU-N = 0 when any p_n with n <= N is 0, or when c = 0.
        The inputs are not modified.

    Raises:
        TypeError / ValueError, naming the argument, when hyps and refs differ in length or are
        empty, a caption is not a str, a refs entry is not a non-empty list of str, or max_n < 1.

    Example: the same scene read from the other object shares every word but no 4-gram.
        >>> scores = corpus_bleu(["a red circle above a blue square"], [["a blue square below a red circle"]])
        >>> [round(s, 3) for s in scores]
        [0.857, 0.756, 0.611, 0.0]
        >>> corpus_bleu(["the cat is on the mat"], [["the cat is on the mat"]], max_n=2)
        [1.0, 1.0]
    """
    _check_corpus(hyps, refs)
    _check_order("max_n", max_n)
    # TODO (Part 3): implement corpus_bleu
    raise NotImplementedError("Part 3 (bleu): corpus_bleu is not implemented yet")
