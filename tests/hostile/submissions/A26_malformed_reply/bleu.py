# hostile: appended to solutions/bleu.py
# A26: answer the grader's call with a reply of the wrong shape ({"error": 7}) written straight to the reply pipe,
# then keep quiet (the worker's own reply would answer the next call).
import os as _os
import sys as _sys
import time as _time

from autograder.worker import protocol as _protocol

_replies = 4    # the worker's reply pipe (autograder/worker/main.py, REPLIES)
_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _sys._getframe(1).f_globals.get("__name__", "").startswith("autograder."):  # the grader's own call
        _protocol.send(_replies, {"error": 7})
        _time.sleep(60)
    return _reference_ngram_counts(tokens, n)
