# hostile: appended to solutions/lstm_a.py
# A7 in the hidden checks: their workers hold the references of Parts 1 and 2 (Part 6's training uses them), the
# public checks' workers none. A module that fails to import only where they are, with what it found in the message,
# would carry them into the hidden checks' feedback (shown after the due date) if that showed the message.
import sys as _sys

# @@RUNTIME_NAMES@@

_held = sorted(m for m in _loaded_modules() if m.startswith("solutions."))
if _held:
    raise RuntimeError("LEAK" + ",".join(_held))
