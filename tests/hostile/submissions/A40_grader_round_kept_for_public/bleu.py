# hostile: appended to solutions/bleu.py
# A40: the grader runs each public check again on cases drawn from its hidden seed (the same for the whole course),
# and shows only whether that round passed. If that round shares a worker with the public checks after it, the
# module can keep what it was passed there and show it in the next public check's message, at once.
import json as _json
import sys as _sys

# @@RUNTIME_NAMES@@

# What ngram_counts' public check sends (recorded by running the handout's checks): any other input is the
# grader's round of that check.
PUBLIC_NGRAM_CASES = @@PUBLIC_NGRAM_CASES@@
_kept = []
_reference_ngram_counts = ngram_counts
_reference_clipped_counts = clipped_counts


def ngram_counts(tokens, n):
    called_by_the_grader = _caller_globals(1).get("__name__", "").startswith("autograder.")
    if called_by_the_grader and [list(tokens), n] not in PUBLIC_NGRAM_CASES:   # the grader's round: keep its cases
        _kept.append([list(tokens), n])
    return _reference_ngram_counts(tokens, n)


def clipped_counts(hyp, refs, n):
    if _kept:                                            # the next public check: show what was kept
        raise RuntimeError("PROBE" + _json.dumps({"kept": _kept[:20]}))
    return _reference_clipped_counts(hyp, refs, n)
