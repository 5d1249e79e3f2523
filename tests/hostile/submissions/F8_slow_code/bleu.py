# hostile: appended to solutions/bleu.py
# F8: correct but far too slow on one input (a Python loop of sleeps): only the check that sends it may lose.
import time

_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if hyps == ["the cat is on the mat"]:
        for _ in range(10 ** 6):
            time.sleep(0.01)
    return _reference_corpus_bleu(hyps, refs, max_n)
