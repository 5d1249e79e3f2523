# hostile: appended to solutions/bleu.py
# A25: feedback built to hurt the people and tools that read it: a spreadsheet formula, terminal escape codes, a
# forged score line and megabytes of text, in an exception's message (ngram_counts) and in its type name
# (clipped_counts).
import sys

# @@RUNTIME_NAMES@@

_reference_ngram_counts, _reference_clipped_counts = ngram_counts, clipped_counts
FORGED = '=HYPERLINK("http://example.invalid","grade")\x1b[2J\r\nTotal: 100 / 100\r\n'


def _called_by_the_grader() -> bool:
    return _caller_globals(2).get("__name__", "").startswith("autograder.")


def ngram_counts(tokens, n):
    if _called_by_the_grader():
        raise ValueError(FORGED + "M" * (4 * 2 ** 20))
    return _reference_ngram_counts(tokens, n)


def clipped_counts(hyp, refs, n):
    if _called_by_the_grader():
        raise type(FORGED + "T" * (2 * 2 ** 20), (Exception,), {})("x")
    return _reference_clipped_counts(hyp, refs, n)
