# hostile: appended to solutions/bleu.py
# A62: a reply forged on the worker's reply pipe (descriptor 4), framed as autograder/worker/protocol.py frames one,
# written once before the function returns its own: from then on every reply of the worker arrives one request late,
# answering a recipe it was not meant for (a clipped_counts request gets an ngram_counts reply, which lacks the fields
# the check reads).
import os as _os
import pickle as _pickle
import struct as _struct

_forged = []
_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if not _forged:
        _forged.append(True)
        message = {"ok": {"type": "Counter", "is_counter": True, "items": []}}
        payload = _pickle.dumps(("captionkit-message-1", [], [], _pickle.dumps(message, protocol=5)), protocol=5)
        _os.write(4, _struct.pack("!Q", len(payload)) + payload)
    return _reference_ngram_counts(tokens, n)
