# hostile: appended to solutions/bleu.py
# F3: corpus_bleu is missing and clipped_counts lost its third argument.
del corpus_bleu


def clipped_counts(hyp, refs):
    return 0, 0
