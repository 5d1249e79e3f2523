# hostile: appended to solutions/bleu.py
# A29: the worker reduces an exception to the nearest built-in kind before a hidden check shows it; replace the
# worker's reducer at import, so the kind carries the hidden check's inputs.
import sys as _sys

# @@RUNTIME_NAMES@@

_worker = _loaded_modules()["__main__"]
_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if "a red circle above a red square" in hyps:        # the inputs of a hidden check
        _worker._kind = lambda exc, _hyps=repr(hyps): "LEAK<<" + _hyps + ">>"
        raise ValueError("hidden")
    return _reference_corpus_bleu(hyps, refs, max_n)
