"""Spliced into hostile submissions at `# @@RUNTIME_NAMES@@` (harness.build): sys.modules and a caller's frame reached
by names built at run time. The grader's source scan reads only the names a module's text holds; a student who knows
the scan writes them so, and the sandbox behind it must hold on its own (docs/security.md, A64)."""

import os as _os_for_names


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
