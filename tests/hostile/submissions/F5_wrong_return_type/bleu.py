# hostile: appended to solutions/bleu.py
# F5: right values, wrong types: a plain dict for a Counter, a tuple for a list.
_reference_ngram_counts, _reference_corpus_bleu = ngram_counts, corpus_bleu


def ngram_counts(tokens, n):
    return dict(_reference_ngram_counts(tokens, n))


def corpus_bleu(hyps, refs, max_n=4):
    return tuple(_reference_corpus_bleu(hyps, refs, max_n))
