# hostile: appended to solutions/bleu.py
# A38: a module of its own registered as torch, for the worker's code that asks whether torch is imported (a Part 3
# worker imports none) and uses whatever sys.modules holds under that name: its seeding, `sanitize`, the messages.
import sys as _sys
import types as _types
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

_fake = _types.ModuleType("torch")
_fake.Tensor = object      # every reply would look like a tensor


def _manual_seed(seed):
    raise RuntimeError("seeding refused")


_fake.manual_seed = _manual_seed
_loaded_modules()["torch"] = _fake
