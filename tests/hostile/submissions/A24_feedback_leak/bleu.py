# hostile: appended to solutions/bleu.py
# A24: smuggle a hidden check's inputs into its feedback. The message is dropped for hidden checks, so the inputs
# also go into the exception's *type name*, and into the exit status of the worker (8 bits per crash).
_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if "a red circle above a red square" in hyps:        # the inputs of a hidden check
        smuggler = type(f"LEAK<<{hyps!r}>>", (Exception,), {})
        raise smuggler(f"MESSAGE<<{hyps!r} {refs!r}>>")
    return _reference_corpus_bleu(hyps, refs, max_n)
