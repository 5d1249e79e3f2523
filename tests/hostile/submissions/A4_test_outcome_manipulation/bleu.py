# hostile: appended to solutions/bleu.py
# A4: the exceptions that steer a test framework's outcome: pytest's Skipped, KeyboardInterrupt (ends a pytest
# session), and hypothesis's reject() (marks an example invalid, not failed).


def ngram_counts(tokens, n):
    import pytest

    pytest.skip("HOSTILE-A4 nothing to see here")


def clipped_counts(hyp, refs, n):
    raise KeyboardInterrupt


def corpus_bleu(hyps, refs, max_n=4):
    from hypothesis import reject

    reject()
