# hostile: appended to solutions/bleu.py
# A38: a module of its own registered as torch, for the worker's code that asks whether torch is imported (a Part 3
# worker imports none) and uses whatever sys.modules holds under that name: its seeding, `sanitize`, the messages.
import sys as _sys
import types as _types

# @@RUNTIME_NAMES@@

_fake = _types.ModuleType("torch")
_fake.Tensor = object      # every reply would look like a tensor


def _manual_seed(seed):
    raise RuntimeError("seeding refused")


_fake.manual_seed = _manual_seed
_loaded_modules()["torch"] = _fake
