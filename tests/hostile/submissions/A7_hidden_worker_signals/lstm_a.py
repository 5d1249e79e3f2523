# hostile: appended to solutions/lstm_a.py
# A7 in the hidden checks, as A7_hidden_import_fails, by how the worker ends: where the references are, exit with a
# status of its choosing (77, in the float64 parity check) or end by a signal of its choosing (SIGUSR2, in training);
# each worth several bits a check if the feedback named them.
import os as _os
import signal as _signal
import sys as _sys

# @@RUNTIME_NAMES@@

_reference_forward = LSTMA.forward


def _forward(self, features, attributes, captions):
    if any(m.startswith("solutions.") for m in _loaded_modules()):
        if features.dtype == torch.float64:
            _os._exit(77)
        _os.kill(_os.getpid(), _signal.SIGUSR2)
    return _reference_forward(self, features, attributes, captions)


LSTMA.forward = _forward
