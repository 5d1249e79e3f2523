"""Part 6 recipes: the student's schedule on given inputs, and the student's LSTMA with weights injected by
the grader (a state dict), run in float64; training A4 on the hidden data with the reference caption loss
(Part 1) and decoding with the reference greedy decoder (Part 2), both graded before this part.

No reference op is blocked here: the LSTM cell is part of the given model (LSTMA.cell is an nn.LSTMCell),
so the LSTM-A checks compare the student's schedule and state against the cell, not a cell they wrote."""

from __future__ import annotations

import contextlib

import torch

from autograder.worker.recipes import image_controls, judged_epochs, load_split, recipe, reference, report_extra
from shared.training import seed_everything, train
from shared.vocab import T_MAX


@contextlib.contextmanager
def _float64():
    """float64 by default while the block runs: the model's parameters and any zeros the student creates
    without a dtype (torch.zeros(n, H), as in the lecture) are float64 too."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def _model(student, variant, sizes, state):
    """The student's LSTMA of the given sizes with every parameter injected from `state`."""
    model = student.LSTMA(
        variant,
        n_vocab=sizes["V"],
        D=sizes["D"],
        L=sizes["L"],
        E=sizes["E"],
        H=sizes["H"],
        n_attr=sizes["n_attr"],
        DV=sizes["DV"],
    )
    model.load_state_dict(state)
    return model.to(state["cell.weight_ih"].dtype).eval()


@recipe()
def schedule_case(student, variant, image, attr):
    """schedule() on the given inputs; also the inputs afterwards (they must be unchanged)."""
    result = student.schedule(variant, image, attr)
    return {"result": result, "inputs_after": (image, attr)}


@recipe()
def schedule_unknown(student, variant, image, attr):
    """What schedule() does with a variant name outside VARIANTS: the exception's type name, or "returned"."""
    try:
        student.schedule(variant, image, attr)
    except Exception as exc:  # noqa: BLE001 (the verdict is the exception's type)
        return type(exc).__name__
    return "returned"


@recipe()
def schedule_gradients(student, variant, image, attr, weight):
    """For every tensor schedule returns (prefix in order, then per_step when not None): its value and the
    gradients of <tensor, weight> with respect to image_input and attr_input (zeros where none flows)."""
    image = image.clone().requires_grad_(True)
    attr = attr.clone().requires_grad_(True)
    prefix, per_step = student.schedule(variant, image, attr)
    returned = list(prefix) + ([] if per_step is None else [per_step])
    out = []
    for x in returned:
        total = (x * weight).sum()
        grads = (
            torch.autograd.grad(total, (image, attr), allow_unused=True, retain_graph=True)
            if total.requires_grad
            else (None, None)
        )
        out.append((x.detach(), *(torch.zeros_like(i) if g is None else g for g, i in zip(grads, (image, attr)))))
    return out


@recipe()
def init_state_case(student, variant, sizes, state, features, attributes):
    """The student's init_state with injected weights (float64)."""
    with _float64(), torch.no_grad():
        return _model(student, variant, sizes, state).init_state(features, attributes)


@recipe()
def forward_case(student, variant, sizes, state, features, attributes, captions, float64=True):
    """The student's teacher-forced logits with injected weights (float64, or the default float32)."""
    with _float64() if float64 else contextlib.nullcontext(), torch.no_grad():
        return _model(student, variant, sizes, state)(features, attributes, captions)


@recipe()
def step_by_step(student, variant, sizes, state, features, attributes, captions):
    """init_state, then step() on captions[:, t] for t < T - 1: the stacked log-probabilities (N, T-1, V)."""
    with _float64(), torch.no_grad():
        model = _model(student, variant, sizes, state)
        s = model.init_state(features, attributes)
        out = []
        for t in range(captions.shape[1] - 1):
            log_probs, s = model.step(captions[:, t], s)
            out.append(log_probs)
        return torch.stack(out, 1)


@recipe()
def train_and_decode(student, data, variant, epochs, batch_size, lr, seed, controls=False):
    """Train the student's LSTMA(variant) with the kit's loop and the reference caption_loss on the hidden
    grids and predicted attributes that file `data` names (the lecture's recipe, as train_lstm_a), until the grader
    has seen its captions reach the threshold or for `epochs` epochs (judged_epochs); return greedy
    captions of its test grids and the training curve."""
    caption_loss, greedy_decode = reference("show_and_tell").caption_loss, reference("decoding").greedy_decode
    d = load_split(data)
    grids, attributes, tokens = d["grids"], d["attributes"], d["tokens"]
    seed_everything(seed)
    model = student.LSTMA(variant)

    def decode(test_grids=d["test_grids"], test_attributes=d["test_attributes"]):
        return greedy_decode(model, model.init_state(test_grids, test_attributes), T_MAX)

    history = train(
        model,
        lambda m, idx: caption_loss(m(grids[idx], attributes[idx], tokens[idx]), tokens[idx]),
        len(tokens),
        epochs,
        batch_size,
        lr,
        seed,
        on_epoch=judged_epochs(model, decode),
    )
    with torch.no_grad():
        predicted = decode()
    return {
        "tokens": predicted,
        "losses": history.losses,
        "controls": report_extra(lambda: image_controls(decode, d["test_grids"], d["test_attributes"]))
        if controls
        else None,
    }
