"""Part 4 recipes: the attention step, the coordinate channels and the soft-attention captioner with
weights injected by the grader, and training on the hidden data (the reference caption_loss of Part 1 and
greedy decoder of Part 2, both graded before this part).

The recipes that call one function return what it returned together with the inputs it was given, as they
are after the call: the grader checks that nothing was modified. Recipes hold no expected values."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.worker.recipes import (
    image_controls,
    judged_epochs,
    load_split,
    recipe,
    reference,
    report_extra,
    step_agrees_with_forward,
)
from shared.training import seed_everything, train
from shared.vocab import START, T_MAX


@recipe(forbid=("sdpa",))
def attend(student, query, keys, values):
    """student.attend on the given tensors; returns (its result, (query, keys, values) after the call)."""
    return student.attend(query, keys, values), (query, keys, values)


@recipe(forbid=("sdpa",))
def attend_gradients(student, query, keys, values, context_weights, weight_weights):
    """The gradients of sum(context * context_weights) + sum(weights * weight_weights) with respect to query, keys
    and values (None for an input the result does not depend on through the graph)."""
    inputs = [t.clone().requires_grad_(True) for t in (query, keys, values)]
    context, weights = student.attend(*inputs)
    total = (context * context_weights).sum() + (weights * weight_weights).sum()
    if not total.requires_grad:
        return None, None, None
    return torch.autograd.grad(total, inputs, allow_unused=True)


@recipe()
def with_coords(student, features, grid):
    """student.with_coords; returns (its result, features after the call)."""
    return student.with_coords(features, grid), features


def _model(student, config: dict, state_dict: dict, dtype: torch.dtype):
    """The student's AttnCaptioner built with `config`, in `dtype`, with the grader's weights loaded."""
    model = student.AttnCaptioner(**config).to(dtype)
    missing, _ = model.load_state_dict(state_dict, strict=False)
    if missing:
        raise ValueError(f"AttnCaptioner lacks the given parameters {sorted(missing)}; keep the given constructor")
    return model


def _tuple_of_tensors(value, length: int) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == length and all(isinstance(v, torch.Tensor) for v in value)


@recipe(forbid=("sdpa",))
def captioner_forward(student, config, state_dict, features, captions):
    """Teacher-forced forward of the student's model with injected weights. Returns what forward returned, the
    inputs after the call, and the type name of what each call forward made to attention_step returned."""
    model = _model(student, config, state_dict, features.dtype)
    returned, attention_step = [], model.attention_step

    def recording(state):
        out = attention_step(state)
        returned.append(type(out).__name__)
        return out

    model.attention_step = recording
    with torch.no_grad():
        out = model(features, captions)
    return out, (features, captions), returned


@recipe(forbid=("sdpa",))
def captioner_gradients(student, config, state_dict, features, captions, logit_weights, map_weights):
    """Gradients of sum(logit_weights * log_softmax(logits)) + sum(map_weights * weights) with respect to
    every parameter of the student's model (None where no gradient reached a parameter), and the dtype of the
    logits. Returns
    {"forward": what forward returned} instead when forward did not return two tensors of the right shapes."""
    model = _model(student, config, state_dict, features.dtype)
    out = model(features, captions)
    if not _tuple_of_tensors(out, 2) or out[0].shape != logit_weights.shape or out[1].shape != map_weights.shape:
        return {"forward": out}
    logits, weights = out
    loss = (F.log_softmax(logits, -1) * logit_weights).sum() + (weights * map_weights).sum()
    loss.backward()
    return {"gradients": {name: p.grad for name, p in model.named_parameters()}, "dtype": str(logits.dtype)}


@recipe(forbid=("sdpa",))
def captioner_steps(student, config, state_dict, features, captions):
    """Feed captions[:, t] to the student's step, t = 0 .. T-2, from the given init_state. Returns the
    log-probabilities of every step, the first state's tensors before and after the first step (a step must
    not modify the state it is given) and the last state returned."""
    model = _model(student, config, state_dict, features.dtype)
    log_probs = []
    with torch.no_grad():
        state = model.init_state(features)
        first_before = tuple(s.clone() for s in state)
        first = state
        for t in range(captions.shape[1] - 1):
            out = model.step(captions[:, t], state)
            if not (isinstance(out, tuple) and len(out) == 2):  # the check names what came back instead
                return {"step": out}
            step_log_probs, state = out
            log_probs.append(step_log_probs)
    return {"log_probs": log_probs, "first_before": first_before, "first_after": tuple(first), "last_state": state}


@recipe(forbid=("sdpa",))
def captioner_attention_step(student, config, state_dict, h, c, features):
    """attention_step of the student's model on the state (h, c, features, Wk(features))."""
    model = _model(student, config, state_dict, features.dtype)
    with torch.no_grad():
        state = (h, c, features, model.Wk(features))
        return model.attention_step(state), state


@recipe()
def train_and_decode(student, data, grid, epochs, batch_size, lr, seed, shown=4, controls=False):
    """Train the student's AttnCaptioner on the student's with_coords of the hidden grids (`data`, from
    autograder.grader.training.share_split) with the kit's loop and the reference caption_loss, until the grader
    has seen its captions reach the threshold or for `epochs` epochs (judged_epochs); return the
    reference greedy decoder's captions of the test grids, the training curve and, for the feedback report,
    the attention maps behind each word of the first `shown` captions (from the student's forward fed those
    captions; None if that fails: the report is optional), and whether the student's step agrees with its forward
    on a few training captions (recipes.step_agrees_with_forward: a failed check names the disagreement)."""
    caption_loss, greedy_decode = reference("show_and_tell").caption_loss, reference("decoding").greedy_decode
    d = load_split(data)
    grids, tokens = d["grids"], d["tokens"]
    test_grids = student.with_coords(d["test_grids"], grid)
    seed_everything(seed)
    model = student.AttnCaptioner()

    def decode(features=test_grids):
        return greedy_decode(model, model.init_state(features), T_MAX)

    # Coordinates are appended batch by batch (with_coords works row by row): a coordinate copy of the whole
    # training set would add its size to the worker's peak memory.
    history = train(
        model,
        lambda m, idx: caption_loss(m(student.with_coords(grids[idx], grid), tokens[idx])[0], tokens[idx]),
        len(tokens),
        epochs,
        batch_size,
        lr,
        seed=seed,
        on_epoch=judged_epochs(model, decode),
    )
    with torch.no_grad():
        predicted = decode()

    def attention():
        words = predicted[:shown]
        inputs = torch.cat([torch.full((len(words), 1), START, dtype=torch.long), words], 1)
        with torch.no_grad():
            return {"weights": model(test_grids[:shown], inputs)[1], "tokens": words}

    def image_controlled():  # the image features change, the coordinates stay
        return image_controls(lambda g: decode(student.with_coords(g, grid)), d["test_grids"])

    def step_agrees():
        return step_agrees_with_forward(
            model, student.with_coords(grids[:8], grid), tokens[:8], logits_of=lambda out: out[0]
        )

    return {
        "tokens": predicted,
        "losses": history.losses,
        "attention": report_extra(attention),
        "step_agrees_with_forward": report_extra(step_agrees),
        "controls": report_extra(image_controlled) if controls else None,
    }
