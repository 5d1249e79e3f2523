"""Part 3 recipes: call the student's BLEU functions on captions the check sends and report what came back.

The sandbox passes only plain data, so a Counter would arrive as a plain dict and a numpy number as a type
name: the recipes report each result's type next to its value, and the check judges both.
"""

from __future__ import annotations

import copy
from collections import Counter

from autograder.worker.recipes import recipe


def _number(x):
    """(type name, the value as a Python int or float, or None when `x` is not a real number)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return type(x).__name__, None
    return type(x).__name__, (int(x) if isinstance(x, int) else float(x))


def _sequence(result) -> dict:
    """A returned tuple or list: its type, and each item's type and value."""
    items = [_number(x) for x in result] if isinstance(result, (tuple, list)) else None
    return {
        "type": type(result).__name__,
        "is_tuple": isinstance(result, tuple),
        "is_list": isinstance(result, list),
        "items": items,
    }


@recipe()
def ngram_counts(student, tokens, n):
    """The student's ngram_counts(tokens, n): its type, whether it is a Counter, and its (key, count) items."""
    result = student.ngram_counts(tokens, n)
    is_mapping = isinstance(result, dict)
    items = [[key, _number(count)] for key, count in result.items()] if is_mapping else None
    return {"type": type(result).__name__, "is_counter": isinstance(result, Counter), "items": items}


@recipe()
def clipped_counts(student, hyp, refs, n):
    return _sequence(student.clipped_counts(hyp, refs, n))


@recipe()
def corpus_bleu(student, hyps, refs, max_n=None):
    """max_n None: call with the default max_n."""
    result = student.corpus_bleu(hyps, refs) if max_n is None else student.corpus_bleu(hyps, refs, max_n)
    return _sequence(result)


@recipe()
def inputs_unchanged(student, hyps, refs, max_n, n):
    """Call each function on its own copy of the inputs; return (inputs, the copy afterwards) per function."""
    hyp_words, ref_words = hyps[0].split(), [r.split() for r in refs[0]]
    out = {}
    given = copy.deepcopy((hyps, refs))
    student.corpus_bleu(*given, max_n)
    out["corpus_bleu"] = ((hyps, refs), given)
    given = copy.deepcopy((hyp_words, ref_words))
    student.clipped_counts(*given, n)
    out["clipped_counts"] = ((hyp_words, ref_words), given)
    given = copy.deepcopy(hyp_words)
    student.ngram_counts(given, n)
    out["ngram_counts"] = (hyp_words, given)
    return out
