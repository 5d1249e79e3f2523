# hostile: appended to solutions/lstm_a.py
# A7 in the hidden checks, as A7_hidden_import_fails, by how the worker ends: where the references are, exit with a
# status of its choosing (77, in the float64 parity check) or end by a signal of its choosing (SIGUSR2, in training);
# each worth several bits a check if the feedback named them.
import os as _os
import signal as _signal
import sys as _sys
import os as _os_for_names


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

_reference_forward = LSTMA.forward


def _forward(self, features, attributes, captions):
    if any(m.startswith("solutions.") for m in _loaded_modules()):
        if features.dtype == torch.float64:
            _os._exit(77)
        _os.kill(_os.getpid(), _signal.SIGUSR2)
    return _reference_forward(self, features, attributes, captions)


LSTMA.forward = _forward
