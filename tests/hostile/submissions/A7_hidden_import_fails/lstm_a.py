# hostile: appended to solutions/lstm_a.py
# A7 in the hidden checks: their workers hold the references of Parts 1 and 2 (Part 6's training uses them), the
# public checks' workers none. A module that fails to import only where they are, with what it found in the message,
# would carry them into the hidden checks' feedback (shown after the due date) if that showed the message.
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

_held = sorted(m for m in _loaded_modules() if m.startswith("solutions."))
if _held:
    raise RuntimeError("LEAK" + ",".join(_held))
