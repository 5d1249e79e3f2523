# hostile: appended to solutions/bleu.py
# A3: leave with status 0 from inside the graded functions: SystemExit from ngram_counts, os._exit(0) from
# clipped_counts (and so from corpus_bleu, which calls it).
import os
import sys


def ngram_counts(tokens, n):
    sys.exit(0)


def clipped_counts(hyp, refs, n):
    os._exit(0)
