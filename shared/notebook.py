"""What the part notebooks (`assignments/<part>.ipynb`) share: their first cell,
`from shared.notebook import start; grader = start("bleu")` (start, which calls setup), and the small data budget
their demos train on.

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

from shared.encoder import user_cache
from shared.parts import BY_MODULE, MODULES, TODO_MESSAGE
from shared.training import seed_everything

# The notebooks' data budget: enough scenes for every demo to show its effect, few enough to train in
# seconds. The encoder is pretrained once on the training scenes and cached (shared.encoder.load_data).
NOTEBOOK_TRAIN, NOTEBOOK_TEST = 2000, 200
# The epochs each part notebook's demo trains for on those scenes. (The lecture's budgets, on 6000 scenes, are the
# training checks', run by the grader.)
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


def setup(part: str, cache: Path | str | None = None, seed: int = 0) -> None:
    """Prepare a part notebook's kernel: one-line TODO messages, one torch thread, a fixed seed, and the data cache.

    Args:
        part: the notebook's part module, e.g. "bleu".
        cache: the folder of the encoder cache when $CAPTIONKIT_CACHE is unset (start: user_cache()); None leaves
            shared.encoder's default.
        seed: seeds Python, NumPy and torch.
    """
    if part not in BY_MODULE:
        raise ValueError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
    if cache is not None:
        os.environ.setdefault("CAPTIONKIT_CACHE", str(cache))
    shell = _shell()
    if shell is not None:  # (plain Python: nothing to register)
        shell.set_custom_exc((NotImplementedError, NameError), _show_error)
    _State.todo = None
    # One thread: the demos' small matrices gain nothing from more, and on a machine whose cores are busy torch's
    # threads wait on each other (show_and_tell: 14 CPU s with one thread, 61 with two, on a loaded two-core machine).
    torch.set_num_threads(1)
    seed_everything(seed)
    torch.set_printoptions(precision=4, sci_mode=False)


def start(part: str, *also: str, tests: str = "tests"):
    """The first cell of a part notebook, `from shared.notebook import start; grader = start("bleu")`: figures drawn
    inline, setup(part) (one-line TODO messages, a fixed seed, the data cache in user_cache() unless
    $CAPTIONKIT_CACHE names one), the part's module and the other part modules `also` imported from the notebook's folder and reloaded
    whenever they are saved (IPython's autoreload, so no restart is needed), and the otter notebook whose
    grader.check runs the public checks (without otter's .OTTER_LOG, which only its export reads); returns it.

    Args:
        part: the notebook's part module, e.g. "bleu".
        also: other part modules the notebook imports, e.g. "show_and_tell" for its caption_loss.
        tests: the folder of the otter test files, relative to the notebook's folder.

    `shared` must be importable: in the handout the notebooks sit beside it; in the kit it is installed (bootstrap).
    """
    if part not in BY_MODULE:
        raise ValueError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
    unknown = [m for m in also if m not in BY_MODULE]
    if unknown:
        raise ValueError(f"also: expected part modules ({', '.join(MODULES)}), got {unknown[0]!r}")
    setup(part, user_cache())
    shell = _shell()
    if shell is not None:
        shell.run_line_magic("matplotlib", "inline")
        shell.run_line_magic("load_ext", "autoreload")
        shell.run_line_magic("autoreload", "1")
        shell.run_line_magic("aimport", ", ".join([part, *also]))   # imports them into the notebook, as `import`
    return _unlogged_notebook()(tests_dir=tests)


def _unlogged_notebook():
    """otter.Notebook without its event log: otter appends every check to .OTTER_LOG in the working folder (the
    student's), for an export to Gradescope that these notebooks never make."""
    import otter

    class Notebook(otter.Notebook):
        def _log_event(self, *args, **kwargs) -> None:
            return None

    return Notebook


def _shell():
    """The running IPython shell, or None (plain Python)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def notebook_data():
    """The notebooks' data: NOTEBOOK_TRAIN training and NOTEBOOK_TEST test scenes (seeds 0 and 1) with the
    encoder's cached annotation grids and predicted attributes (a shared.encoder.CaptionData)."""
    from shared.encoder import load_data

    return load_data(train_seed=0, test_seed=1, n_train=NOTEBOOK_TRAIN, n_test=NOTEBOOK_TEST)
