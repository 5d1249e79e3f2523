"""Part 7 recipes: the student's factored cell with weights injected by the grader, the styled update on a
small StyleNet under several optimizers, and StyleNet trained on the hidden data (with the reference caption
loss of Part 1 and the reference greedy decoder of Part 2, both graded before this part)."""

from __future__ import annotations

import inspect
import types

import torch

from autograder.worker.recipes import image_controls, judged_epochs, load_split, recipe, reference, report_extra
from shared.training import make_adam
from shared.vocab import encode_batch

STYLED = ("cell.S.romantic", "emb.weight", "out.weight", "out.bias")  # what the styled update may hold


def _cell(student, E, H, rank, weights):
    """The student's FactoredLSTMCell in float64 with every parameter overwritten from `weights`."""
    cell = student.FactoredLSTMCell(E, H, rank).to(torch.float64)
    with torch.no_grad():
        cell.U.copy_(weights["U"])
        cell.V.copy_(weights["V"])
        for style in ("factual", "romantic"):
            cell.S[style].copy_(weights[f"S.{style}"])
        cell.W_h.weight.copy_(weights["W_h.weight"])
        cell.W_h.bias.copy_(weights["W_h.bias"])
        cell.b.copy_(weights["b"])
    return cell


@recipe()
def input_weights(student, E, H, rank, weights, settings):
    """input_weight for each (how, style, mix): how "arguments" calls input_weight(style, mix) on a cell left at
    its defaults; how "attributes" sets cell.style and cell.mix and calls input_weight()."""
    out = []
    for how, style, mix in settings:
        cell = _cell(student, E, H, rank, weights)
        if how == "arguments":
            out.append(cell.input_weight(style, mix))
        else:
            cell.style, cell.mix = style, mix
            out.append(cell.input_weight())
    return out


@recipe(forbid=("lstm_cell",))
def forward_steps(student, E, H, rank, weights, settings, xs, h0, c0):
    """For each (style, mix): set the cell's attributes and run len(xs) steps from (h0, c0); return every
    step's (h, c), and the inputs afterwards (they must be unchanged)."""
    results = []
    for style, mix in settings:
        cell = _cell(student, E, H, rank, weights)
        cell.style, cell.mix = style, mix
        state, steps = (h0, c0), []
        for x in xs:
            state = cell(x, state)
            steps.append(state)
            if not (isinstance(state, (tuple, list)) and len(state) == 2):
                break  # the check reports the wrong type
        results.append(steps)
    return {"steps": results, "inputs_after": (xs, h0, c0)}


@recipe(forbid=("lstm_cell",))
def forward_gradients(student, E, H, rank, weights, style, mix, x, h0, c0, grad_h, grad_c):
    """Backpropagate sum(h * grad_h) + sum(c * grad_c) through one step; return the gradient of every parameter
    and input (None where none arrived)."""
    cell = _cell(student, E, H, rank, weights)
    cell.style, cell.mix = style, mix
    x, h0, c0 = (t.clone().requires_grad_() for t in (x, h0, c0))
    h, c = cell(x, (h0, c0))
    ((h * grad_h).sum() + (c * grad_c).sum()).backward()
    grads = {name: p.grad for name, p in cell.named_parameters()}
    grads.update(x=x.grad, h0=h0.grad, c0=c0.grad)
    return grads


class _ShrinkEverything(torch.optim.Optimizer):
    """An optimizer that ignores gradients where it likes: a gradient step where there is a gradient, and every
    parameter shrinks by 1%, gradient or not. The styled update must still leave the rest untouched."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.sub_(group["lr"] * p.grad)
                p.mul_(0.99)


def _optimizer(kind: str, model):
    named = dict(model.named_parameters())
    lecture = [named[n] for n in STYLED]
    everything = list(model.parameters())
    if kind == "adam_lecture":
        return make_adam(lecture, 1e-2)
    if kind == "sgd_all":
        return torch.optim.SGD(everything, lr=0.1, momentum=0.9, weight_decay=0.01)
    if kind == "sgd_plain_all":
        return torch.optim.SGD(everything, lr=0.1)
    if kind == "sgd_nesterov_lecture":
        return torch.optim.SGD(lecture, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)
    if kind == "adamw_all":
        return torch.optim.AdamW(everything, lr=1e-2, weight_decay=0.1)
    if kind == "rmsprop_all":
        return torch.optim.RMSprop(everything, lr=1e-2, momentum=0.5, weight_decay=0.01)
    if kind == "shrink_all":
        return _ShrinkEverything(everything)
    raise ValueError(f"unknown optimizer kind {kind!r}")


def _lstm_cell_forward(cell, x, state):
    """The cell's step by nn.LSTMCell's own op with weight_ih = U S V, S from the cell's style and mix attributes
    as the contract defines them. The styled update is judged on its own: with this in place of the student's
    cell, a bug in the cell costs points only in the cell's checks."""
    if cell.mix is not None:
        S = (1 - cell.mix) * cell.S["factual"] + cell.mix * cell.S["romantic"]
    else:
        S = cell.S[cell.style]
    h, c = torch.lstm_cell(x, tuple(state), cell.U @ S @ cell.V, cell.W_h.weight, cell.b, cell.W_h.bias)
    return h, c


@recipe()
def styled_steps(student, sizes, weights, warmup_grads, optimizer, style_before, captions, h0, c0, expand, steps):
    """Build the student's StyleNet with injected weights and nn.LSTMCell's op for its cell; give `optimizer` state
    for every parameter it holds (one step on the grader's gradients, which stay in .grad as after a factual
    batch); set the style; then run styled_text_step `steps` times. Returns the parameters before each step and at
    the end, each returned value, the style afterwards and the inputs afterwards."""
    model = student.StyleNet(**sizes)
    model.load_state_dict(weights)
    model.cell.forward = types.MethodType(_lstm_cell_forward, model.cell)
    opt = _optimizer(optimizer, model)
    for name, p in model.named_parameters():
        p.grad = warmup_grads[name].clone()
    opt.step()
    model.set_style(*style_before)
    state = (h0.expand(captions.shape[0], -1), c0.expand(captions.shape[0], -1)) if expand else (h0, c0)
    snapshots, values = [], []
    for _ in range(steps):
        snapshots.append({n: p.detach().clone() for n, p in model.named_parameters()})
        value = student.styled_text_step(model, captions, state, opt)
        values.append(float(value) if isinstance(value, float) else value)
    snapshots.append({n: p.detach().clone() for n, p in model.named_parameters()})
    return {
        "params": snapshots,
        "values": values,
        "style_after": (model.cell.style, model.cell.mix),
        "inputs_after": (captions, state[0], state[1]),
    }


class _Stopped(BaseException):
    """Raised out of the student's train_stylenet once the grader has seen the run reach the threshold. A
    BaseException, as KeyboardInterrupt is, so an `except Exception` in a student's loop does not swallow it."""


def _styled_step_of(student):
    """The styled update train_stylenet uses when none is passed: the default of its `styled_step` parameter (the
    given code's: the student's styled_text_step); None when it has no such parameter."""
    try:
        parameter = inspect.signature(student.train_stylenet).parameters.get("styled_step")
    except (TypeError, ValueError):
        return None
    if parameter is None or parameter.default is inspect.Parameter.empty or not callable(parameter.default):
        return None
    return parameter.default


def _decode_styles(model, greedy_decode, grids: torch.Tensor, max_len: int) -> dict[str, torch.Tensor]:
    """{"factual", "romantic": (N, max_len) greedy captions of `grids` under that factor}; the model's style and
    mix are left as they were."""
    previous = (model.cell.style, model.cell.mix)
    try:
        predicted = {}
        for style in ("factual", "romantic"):
            model.set_style(style)
            predicted[style] = greedy_decode(model, model.init_state(grids), max_len)
        return predicted
    finally:
        model.cell.style, model.cell.mix = previous


class _JudgedSchedule:
    """Follows the given alternating schedule through the two functions the recipe passes train_stylenet: the
    factual loss (one call per factual batch) and the styled update (one call after each factual batch). After an
    epoch's last styled update it reports the epoch with the captions of the model as it stands (judged_epochs) and
    raises _Stopped once the grader has seen them reach the threshold. It keeps the losses as train_stylenet's
    history does, for a run that ends that way."""

    def __init__(self, batches_per_epoch: int, epochs: int, n: int, decode):
        self.batches_per_epoch, self.epochs, self.n, self.decode = batches_per_epoch, epochs, n, decode
        self.batches = 0
        self.total_f, self.total_s = 0.0, 0.0
        self.factual_losses: list = []
        self.styled_losses: list = []
        self.tokens = None  # the captions last judged: those of the epoch that stopped the run
        self.model = None  # the model train_stylenet trains (what a stopped run's controls decode)

    def factual_batch(self, loss: float, size: int) -> None:
        self.total_f += loss * size

    def styled_batch(self, model, value) -> None:
        self.model = model
        self.total_s += value
        self.batches += 1
        if self.batches % self.batches_per_epoch:
            return
        epoch = self.batches // self.batches_per_epoch
        self.factual_losses.append(self.total_f / self.n)
        self.styled_losses.append(self.total_s / self.batches_per_epoch)
        self.total_f = self.total_s = 0.0
        if epoch > self.epochs:  # a loop that is not the given schedule: nothing more to report
            return

        def decode():
            self.tokens = self.decode(model)
            return self.tokens

        if judged_epochs(model, decode)(epoch, self.epochs, self.factual_losses[-1]):
            raise _Stopped()


@recipe()
def train_and_decode(student, data, epochs, batch_size, lr, seed, max_len, controls=False):
    """Train the student's StyleNet with its train_stylenet (given code: the alternating schedule, the student's
    cell and styled_text_step) and the reference caption loss, on the hidden grids and targets of file `data`
    (autograder.grader.training.share_split; the factual targets encoded with length max_len, as the lecture
    does) and the student module's styled corpus, until the grader has seen its captions reach the threshold
    (judged after each epoch's last styled update) or for `epochs` epochs; return greedy captions of the hidden
    test grids under each factor, and the training curves; with `controls`, also the lab's image controls
    (recipes.image_controls) under "controls"."""
    caption_loss, greedy_decode = reference("show_and_tell").caption_loss, reference("decoding").greedy_decode
    d = load_split(data)
    captions = encode_batch(d["targets"], max_len)
    schedule = _JudgedSchedule(
        -(-len(captions) // batch_size),
        epochs,
        len(captions),
        lambda model: _decode_styles(model, greedy_decode, d["test_grids"], max_len),
    )

    def factual_loss(logits, targets):
        """caption_loss, counted: each factual batch calls it once."""
        loss = caption_loss(logits, targets)
        schedule.factual_batch(loss.item(), len(targets))
        return loss

    def image_controlled(model):
        if not controls:
            return None
        return report_extra(
            lambda: image_controls(lambda g: _decode_styles(model, greedy_decode, g, max_len), d["test_grids"])
        )

    student_step = _styled_step_of(student)
    judged = {}
    if student_step is not None:

        def styled_step(model, styled, state, optimizer):
            """The student's styled update, then the epoch's judgement when it was the epoch's last batch."""
            value = student_step(model, styled, state, optimizer)
            schedule.styled_batch(model, value)
            return value

        judged = {"styled_step": styled_step}
    try:
        model, history = student.train_stylenet(
            d["grids"],
            captions,
            student.styled_corpus(),
            factual_loss,
            epochs=epochs,
            lr=lr,
            batch_size=batch_size,
            seed=seed,
            **judged,
        )
    except _Stopped:
        return {
            "tokens": schedule.tokens,
            "factual_losses": schedule.factual_losses,
            "styled_losses": schedule.styled_losses,
            "controls": image_controlled(schedule.model),
        }
    with torch.no_grad():
        predicted = _decode_styles(model, greedy_decode, d["test_grids"], max_len)
    return {
        "tokens": predicted,
        "factual_losses": list(history.factual_losses),
        "styled_losses": list(history.styled_losses),
        "controls": image_controlled(model),
    }
