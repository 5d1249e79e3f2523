"""What the part notebooks (`assignments/<part>.ipynb`) share: the setup their first cell runs, and the
small data budget their demos train on.

`setup(part)` makes an unfinished TODO read as one line in the notebook instead of a traceback: a stub
raises `NotImplementedError("Part N (module): function is not implemented yet")`, and the cell that
reaches it shows exactly that, plus where to write the code. A later cell that needs a name the stopped
cell never defined shows one line too, saying so. Every other error keeps its full traceback.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import torch

from shared.parts import BY_MODULE, MODULES, TODO_MESSAGE
from shared.training import seed_everything


# The notebooks' data budget: enough scenes for every demo to show its effect, few enough to train in
# seconds. The encoder is pretrained once on the training scenes and cached (shared.encoder.load_data).
NOTEBOOK_TRAIN, NOTEBOOK_TEST = 2000, 200
# The epochs each part notebook's demo trains for on those scenes. (The lecture's budgets, on 6000 scenes, are the
# training checks': autograder/grader/training.py.)
NOTEBOOK_EPOCHS = {"show_and_tell": 8, "attention": 20, "lstm_a": 5, "stylenet": 8}


class _State:
    todo: str | None = None   # the message of the last TODO a cell stopped at, in this kernel


def todo_line(message: str) -> str | None:
    """The one line shown for a stub's NotImplementedError message, or None if `message` is not one."""
    match = TODO_MESSAGE.match(message)
    if match is None:
        return None
    return f"NotImplementedError: {match.group(0)}. Write it in {match.group('module')}.py, then run this cell again."


def _show_error(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler for NotImplementedError and NameError (see setup)."""
    line = None
    if issubclass(etype, NotImplementedError):
        line = todo_line(str(value))
        if line is not None:
            _State.todo = TODO_MESSAGE.match(str(value)).group(0)
    elif issubclass(etype, NameError) and _State.todo is not None:
        line = f"NameError: {value}: an earlier cell stopped at a TODO ({_State.todo})."
    if line is None:  # not ours: the usual traceback
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")  # a figure the stopped cell had begun would show up empty
    shell._showtraceback(etype, value, [line])
    return None


def setup(part: str, kit: Path | str | None = None, seed: int = 0) -> None:
    """Prepare a part notebook's kernel: one-line TODO messages, a fixed seed, and the data cache.

    Args:
        part: the notebook's part module, e.g. "bleu".
        kit: the kit's root folder when the notebook sits inside it; the encoder cache then goes to
            kit/.cache/captionkit, shared by every notebook (unless $CAPTIONKIT_CACHE says otherwise).
        seed: seeds Python, NumPy and torch.
    """
    if part not in BY_MODULE:
        raise ValueError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
    if kit is not None:
        os.environ.setdefault("CAPTIONKIT_CACHE", str(Path(kit) / ".cache" / "captionkit"))
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing to register
        shell = None
    else:
        shell = get_ipython()
    if shell is not None:
        shell.set_custom_exc((NotImplementedError, NameError), _show_error)
    _State.todo = None
    seed_everything(seed)
    torch.set_printoptions(precision=4, sci_mode=False)


def notebook_data():
    """The notebooks' data: NOTEBOOK_TRAIN training and NOTEBOOK_TEST test scenes (seeds 0 and 1) with the
    encoder's cached annotation grids and predicted attributes (a shared.encoder.CaptionData)."""
    from shared.encoder import load_data

    return load_data(train_seed=0, test_seed=1, n_train=NOTEBOOK_TRAIN, n_test=NOTEBOOK_TEST)
