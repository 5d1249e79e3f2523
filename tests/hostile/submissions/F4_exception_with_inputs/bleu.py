# hostile: appended to solutions/bleu.py
# F4: an honest exception whose message quotes its inputs. It fires on one public case (the lecture's "the cat
# is on the mat") and on the inputs of one hidden check, whose inputs must not reach the student.
_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if any(h in ("the cat is on the mat", "a red circle above a red square") for h in hyps):
        raise ValueError(f"LEAK<<{hyps!r} {refs!r}>> cannot be scored")
    return _reference_corpus_bleu(hyps, refs, max_n)
