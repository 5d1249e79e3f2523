# hostile: appended to solutions/bleu.py
# A39: the worker keeps a traceback frame as "the student's" when its file name starts with the submission's folder
# (autograder/worker/main.py, in the handout), and a hidden check shows "your code raised ValueError at <file>:<line>".
# Code compiled under a file name of the student's choosing then carries what the worker holds: a hidden check's
# inputs, and, shown at once, the cases of the grader's round of a public check. VARIANT picks how the location
# is shaped: a long name holding the inputs, another file's name, text that looks like a location, a line number
# far past the file's end, or the worker's own error reducer replaced by the module.
import linecache as _linecache
import sys as _sys

# @@RUNTIME_NAMES@@

VARIANT = "@@VARIANT@@"
# What ngram_counts' public check sends (recorded by running the handout's checks): any other input is the
# grader's round of that check.
PUBLIC_NGRAM_CASES = @@PUBLIC_NGRAM_CASES@@
_FOLDER = "/submission/"
_worker = _loaded_modules()["__main__"]
_reference_corpus_bleu = corpus_bleu
_reference_ngram_counts = ngram_counts


def _raise_from(secret: str):
    """Raise a ValueError whose innermost frame says `secret` (the way VARIANT picks)."""
    text = repr(secret).replace('"', "'")   # no double quote: a traceback quotes the file name with them
    if VARIANT == "long_name":
        name, body = _FOLDER + f"LEAK<<{text}>>" + "=" * max(900 - len(text), 0) + ".py", "raise ValueError('x')"
    elif VARIANT == "other_file":
        number = sum(map(ord, text)) % 997 + 1          # a number drawn from the inputs, in another file's name
        name, body = _FOLDER + f"LEAK{number}_decoding.py", "\n" * number + "raise ValueError('x')"
    elif VARIANT == "location_text":
        name = _FOLDER + f'bleu.py", line 1, in f\n  File "LEAK<<{text}>>.py'
        body = "raise ValueError('x')"
    elif VARIANT == "line_number":
        number = 10 ** 6 + sum(map(ord, text))          # the worker keeps bleu.py's frames: a line far past its end
        name, body = _FOLDER + "bleu.py", "\n" * number + "raise ValueError('x')"
    else:   # reducer_replaced: the worker's error reducer replaced, so the location is whatever the module likes
        forged = (f'  File "bleu.py", line 3, in LEAK<<{text}>>\n    LEAK<<{text}>>\n'
                  f'  File "../solutions/bleu.py", line 2, in f\n  File "bleu.py", line 999999, in g\n')
        _worker._error = lambda exc, staging: {"type": "ValueError", "message": "x", "where": forged}
        raise ValueError("x")
    _linecache.cache[name] = (0, None, [f"LEAK<<{text}>>\n"] * 3, name)   # the "source line" a traceback shows
    exec(compile(body, name, "exec"), {})


def corpus_bleu(hyps, refs, max_n=4):
    if "a red circle above a red square" in hyps:        # the inputs of a hidden check
        _raise_from(f"{hyps} {refs}")
    return _reference_corpus_bleu(hyps, refs, max_n)


def ngram_counts(tokens, n):
    called_by_the_grader = _caller_globals(1).get("__name__", "").startswith("autograder.")
    if called_by_the_grader and [list(tokens), n] not in PUBLIC_NGRAM_CASES:   # the grader's round: its own cases
        _raise_from(f"{tokens} {n}")
    return _reference_ngram_counts(tokens, n)
