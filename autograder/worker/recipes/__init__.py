"""Recipes: the only code that runs next to student code.

A recipe takes the student's module and plain data (tensors, numbers, strings), builds whatever
the check needs (a toy model, a student model with injected weights), calls the student's code and
returns plain data. Recipes hold no expected values and no hidden inputs: those stay in the grading
process (`autograder/grader/checks/`), which sends inputs and compares what comes back.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any, Protocol, cast


class Recipe(Protocol):
    """A registered recipe: called with the student's module and plain data; `forbid` names the reference ops it bans
    while it runs."""

    forbid: tuple[str, ...]

    def __call__(self, student: types.ModuleType, /, *args: Any, **kwargs: Any) -> Any: ...


RECIPES: dict[str, Recipe] = {}
# Set by the worker around each call: sends one progress message to the grader (autograder/worker/protocol.py) and, when it
# carries the captions of an epoch's model, returns the grader's answer (True: stop training, the captions reach the
# check's threshold). Progress is shown to the person grading; the grader validates every message's shape.
_report_progress: Callable[..., bool] | None = None
# The reference modules of earlier parts this worker was sent (autograder.worker.main.install_references).
REFERENCES: dict[str, types.ModuleType] = {}
# Parts whose recipes import no torch and send and receive plain data: their workers never import torch unless the
# student's module does (autograder.worker.main.preload), which spares each such part torch's import.
WITHOUT_TORCH = frozenset({"bleu"})


def recipe(name: str | None = None, forbid: tuple[str, ...] = ()):
    """Register a recipe as `<part>.<function name>`. `forbid` names reference ops (see
    autograder.worker.forbidden) that are unavailable while the recipe runs."""

    def register(fn: Callable) -> Callable:
        part = fn.__module__.rsplit(".", 1)[-1]
        key = f"{part}.{name or fn.__name__}"
        if key in RECIPES:
            raise ValueError(f"recipe {key} registered twice")
        fn.forbid = forbid  # type: ignore[attr-defined]  # what makes a function a Recipe
        RECIPES[key] = cast(Recipe, fn)
        return fn

    return register


def report_extra(make: Callable):
    """make(), or None when it raises: what a recipe computes only for the feedback report (figures of the
    student's trained model) must never fail a check."""
    try:
        return make()
    except Exception:  # noqa: BLE001 (the report says the figure is missing)
        return None


def image_controls(decode: Callable, *features) -> dict:
    """The lab's two controls of a trained captioner (`python -m autograder check --train` asks for them):
    {"zeroed": decode(*zeros), "shuffled": decode(*rolled)}, its captions of the test scenes with every image
    feature zeroed, and with each scene reading the image features of the scene before it (rolled by one, as the
    lab shuffles). Each of `features` is an (N, ...) tensor of the test scenes' image features (grids, attributes),
    decode(*features) their captions. A model that reads the image loses its exact match under both."""
    import torch

    with torch.no_grad():
        return {
            "zeroed": decode(*(torch.zeros_like(f) for f in features)),
            "shuffled": decode(*(f.roll(1, 0) for f in features)),
        }


# How close step's log-probabilities must be to forward's: float32 through T-1 steps of a trained model, whose step and
# forward may sum in different orders (the worker zone's one tolerance; the checks' are autograder/public/tolerances.py).
STEP_AND_FORWARD_RTOL, STEP_AND_FORWARD_ATOL = 1e-3, 1e-4


def step_agrees_with_forward(model, features, captions, logits_of: Callable = lambda out: out) -> bool:
    """Whether init_state, then step on captions[:, t], gives log_softmax of the logits of forward (N, T-1, V;
    logits_of(what forward returned): Part 4's forward also returns its attention weights) on these features and
    (N, T) captions. Training follows forward while the judged captions come from step: a failing training check says
    so when they disagree (autograder.public.training_verdicts.known_causes)."""
    import torch

    with torch.no_grad():
        expected = logits_of(model(features, captions)).log_softmax(-1)
        state, steps = model.init_state(features), []
        for t in range(captions.shape[1] - 1):
            log_probs, state = model.step(captions[:, t], state)
            steps.append(log_probs)
        return bool(
            torch.allclose(torch.stack(steps, 1), expected, rtol=STEP_AND_FORWARD_RTOL, atol=STEP_AND_FORWARD_ATOL)
        )


def epoch_done(epoch: int, epochs: int, loss: float) -> None:
    """Tell the grader that training epoch `epoch` of `epochs` ended with this mean loss (shared.training.train's
    on_epoch). A no-op outside a worker."""
    if _report_progress is not None:
        _report_progress(epoch, epochs, loss)


def judged_epochs(model, decode: Callable[[], object]) -> Callable[[int, int, float], bool]:
    """on_epoch for shared.training.train in a training check: after each epoch, report it with `decode()`, the
    captions of the hidden test grids the recipe would return if training ended there, and return the grader's
    answer: True (stop training) once the grader has seen them reach the check's threshold. Evaluating leaves the
    run as it was (see evaluated), so a run that is never stopped trains exactly as without it."""

    def on_epoch(epoch: int, epochs: int, loss: float) -> bool:
        if _report_progress is None:
            return False
        tokens = evaluated(model, decode) if epoch < epochs else None  # after the last epoch the run ends anyway
        if tokens is None:
            _report_progress(epoch, epochs, loss)
            return False
        return _report_progress(epoch, epochs, loss, tokens) is True

    return on_epoch


def evaluated(model, decode: Callable[[], object]):
    """decode() with `model` in eval mode and without gradients, as a recipe decodes after training, then `model`
    back in its mode and Python's, NumPy's and torch's generators as they were (decoding must not change the rest
    of the run); None when decoding raises (the recipe's own decode at the end reports that error)."""
    import random

    import numpy as np
    import torch

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return decode()
    except Exception:  # noqa: BLE001 (student code; the same decode at the end of training reports it)
        return None
    finally:
        model.train(training)
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def reference(part: str) -> types.ModuleType:
    """The reference module of an earlier part, for a recipe that trains or decodes with another part's code
    (say, Part 4's training with Part 1's caption_loss and Part 2's greedy_decode). The grader sends a worker
    the source of the parts graded before its own (engine.REFERENCES), installed in memory before the
    student's module is imported; the worker never reads the reference files. (The student handout's
    `check --train` sends the student's own modules of those parts instead: autograder.public.training.)"""
    if part not in REFERENCES:
        raise LookupError(
            f"the reference of {part} was not sent to this worker (autograder.grader.engine.REFERENCES "
            "lists the references each part's worker receives)"
        )
    return REFERENCES[part]


def load_split(path: str) -> dict:
    """The inputs of a training run, shared in a file (autograder.public.training.split_index: the hidden data in a
    grade, the public data in `check --train`):
    grids, tokens, targets, attributes, test_grids, test_attributes (the grids memory-mapped from the encoder file
    named under encoder_file), and the training scenes' objects for Part 5's look policy under look
    (shared.looking.objects_of; None in a file written without them)."""
    import torch

    index = torch.load(path, weights_only=True)
    encoded = torch.load(index["encoder_file"], weights_only=True, mmap=True)
    return {
        "grids": encoded["tr_grid"],
        "tokens": index["tokens"],
        "targets": index["targets"],
        "attributes": encoded["tr_attr"],
        "test_grids": encoded["te_grid"],
        "test_attributes": encoded["te_attr"],
        "encoder_file": index["encoder_file"],
        "look": index.get("look"),
    }


def training_grids_through(encoder_file: str, transform: Callable, rows: int = 512):
    """transform(grids) for the training grids of `encoder_file` (load_split's "grids" and "encoder_file"), made
    `rows` rows at a time into one new tensor. The file is mapped afresh for each block and unmapped after it, so its
    pages never sit resident beside the whole result: a transform of the whole memory-mapped tensor holds both at once
    (about 60 MB more, for a moment at a training check's start, on the order of the grade's peak: see
    the kit's grade benchmark). `transform` must treat each row on its own (with_coords, a row's own mean)."""
    import torch

    result, start = None, 0
    while result is None or start < len(result):
        grids = torch.load(encoder_file, weights_only=True, mmap=True)["tr_grid"]
        block = transform(grids[start : start + rows])
        if result is None:  # the first block: its rows tell the result's shape and type
            result = torch.empty((len(grids), *block.shape[1:]), dtype=block.dtype)
        del grids  # the last reference to the mapping: its pages go with it
        result[start : start + len(block)] = block
        start += rows
    return result


def load(part: str) -> dict[str, Recipe]:
    """Import the recipes of one part and return the registry."""
    importlib.import_module(f"autograder.worker.recipes.{part}")
    return RECIPES
