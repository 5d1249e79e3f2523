# hostile: appended to solutions/attention.py
# A7 in the hidden checks, as A7_hidden_import_fails, by how the worker ends: where the references are, exit with a
# status of its choosing (77) or end by a signal of its choosing (SIGUSR2), by the query's width; each worth several
# bits a check if the feedback named them.
import os as _os
import signal as _signal
import sys as _sys

_reference_attend = attend


def attend(query, keys, values):
    if any(m.startswith("solutions.") for m in _sys.modules):
        if query.shape[-1] % 2:
            _os.kill(_os.getpid(), _signal.SIGUSR2)
        _os._exit(77)
    return _reference_attend(query, keys, values)
