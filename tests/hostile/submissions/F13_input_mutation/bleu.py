# hostile: appended to solutions/bleu.py
# F13: right answers, then the inputs are emptied in place. A grader that computed its expected value after the
# call, from the same lists, would compare against the reference on empty inputs.
_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    scores = _reference_corpus_bleu(hyps, refs, max_n)
    for ref_list in refs:
        ref_list.clear()
    hyps.clear()
    return scores
