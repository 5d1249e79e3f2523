"""Part 1 hidden checks: the ReLU step and the loss on larger inputs, the image entering exactly once, inputs
left alone, and the retrieval functions on full-size inputs. (The public checks and the helpers both use:
autograder/public/checks/show_and_tell/.)"""

from __future__ import annotations

import torch
from hypothesis import given
from torch import nn

from autograder.grader.strategies import full_size_loss_cases, full_size_retrieval_cases, larger_ranking_cases
from autograder.grader.tolerances import IMAGE_IGNORED
from autograder.public.checks import check
from autograder.public.checks import show_and_tell as public
from autograder.public.checks.show_and_tell import (
    F64,
    _forward,
    _loss_inputs,
    _loss_value_and_gradient_property,
    _model_inputs,
    _randn,
    _relu_step_property,
    _retrieval_property,
    _step_inputs,
    ranking_scores,
)
from autograder.public.compare import expect, expect_float_tensor, expect_tensor, type_name
from autograder.public.strategies import FEW, PROPERTY, examples, image_term_flags, model_cases, step_cases
from autograder.public.tolerances import EXACT
from solutions import show_and_tell as reference


def reference_model(sizes: dict, weights: dict) -> nn.Module:
    """The reference ShowTellRNN in float64 with the injected weights."""
    model = reference.ShowTellRNN(**sizes).to(F64)
    with torch.no_grad():
        for name, value in weights.items():
            model.get_parameter(name).copy_(value.to(F64))
    return model


@check()
def relu_rnn_step_matches_rnn_cell_on_larger_inputs(student, ctx):
    """relu_rnn_step equals nn.RNNCell on larger batches and widths, with and without an image term."""

    @PROPERTY
    @given(step_cases(32, 48), image_term_flags)
    def prop(case, with_image):
        _relu_step_property(student, case, with_image)

    prop()


@check()
def caption_loss_on_full_size_batches(student, ctx):
    """caption_loss and its gradient are right on batches of the real vocabulary and caption length."""

    @PROPERTY
    @given(full_size_loss_cases)
    def prop(case):
        _loss_value_and_gradient_property(student, case)

    prop()


@check()
def the_image_enters_exactly_once(student, ctx):
    """The image enters only through the first step: with W_ih = 0 forward ignores it; with W_hh = 0 only step 1 sees it."""

    @FEW
    @given(model_cases)
    def prop(case):
        sizes, weights, features, captions, describe, g = _model_inputs(case, zero=("W_ih.weight",))
        other = _randn(g, *features.shape).float()
        shape = (captions.shape[0], captions.shape[1] - 1, sizes["n_vocab"])
        first = expect_float_tensor(
            "forward(features, captions)", _forward(student, sizes, weights, features, captions), shape, describe
        )
        second = expect_float_tensor(
            "forward(other features, captions)", _forward(student, sizes, weights, other, captions), shape, describe
        )
        expect_tensor(
            "forward(other features, captions) with W_ih = 0 (the features must not matter)",
            second,
            first,
            tolerance=IMAGE_IGNORED,
            case=describe,
            check_dtype=False,
        )

        sizes, weights, features, captions, describe, g = _model_inputs(case, zero=("W_hh.weight",))
        other = _randn(g, *features.shape).float()
        first = expect_float_tensor(
            "forward(features, captions)", _forward(student, sizes, weights, features, captions), shape, describe
        )
        second = expect_float_tensor(
            "forward(other features, captions)", _forward(student, sizes, weights, other, captions), shape, describe
        )
        expect_tensor(
            "forward(other features, captions)[:, 1:] with W_hh = 0 (after the first step the image "
            "must not enter again)",
            second[:, 1:],
            first[:, 1:],
            tolerance=IMAGE_IGNORED,
            case=describe,
            check_dtype=False,
        )
        ref = reference_model(sizes, weights)
        with torch.no_grad():
            ref_change = (ref(features.to(F64), captions) - ref(other.to(F64), captions))[:, 0].abs().max().item()
        if ref_change > 1e-2:  # the image does reach the first step's logits here
            change = (second[:, 0].to(F64) - first[:, 0].to(F64)).abs().max().item()
            expect(
                change > 1e-3 * ref_change,
                f"forward(features, captions)[:, 0] did not change when the features "
                f"changed (largest change {change:.3g}; the image term enters at the first step)",
                describe,
            )

    prop()


@check()
def part_one_functions_leave_their_inputs_unchanged(student, ctx):
    """relu_rnn_step, caption_loss, init_state, step and forward modify neither their inputs nor the parameters."""
    model_case = (20240521, 3, 5, 7, 2, 3, 4, 5, 3)
    sizes, weights, features, captions, model_describe, g = _model_inputs(model_case)
    tokens = captions[:, 1].clone()
    state = (_randn(g, 3, sizes["H"]).abs().float(), _randn(g, 3, sizes["H"]).float())
    model_describe += f", tokens {tokens.tolist()}, state (h (3, {sizes['H']}) |N(0, 1)|, image_term N(0, 1))"
    step_inputs, step_describe = _step_inputs((7, 3, 4, 5, "float32"), with_image=True)
    logits, targets, loss_describe, _ = _loss_inputs((8, 3, 5, 7, 1.0, "float32"))
    sent = {
        "relu_rnn_step": (
            {
                "x": step_inputs["x"],
                "h_prev": step_inputs["h"],
                "W_xh": step_inputs["W_xh"],
                "W_hh": step_inputs["W_hh"],
                "b": step_inputs["b"],
                "image_term": step_inputs["image_term"],
            },
            step_describe,
        ),
        "caption_loss": ({"logits": logits, "captions": targets}, loss_describe),
        "ShowTellRNN": (
            {"features": features, "captions": captions, "tokens": tokens, "state[0]": state[0], "state[1]": state[1]},
            "init_state(features), step(tokens, state), forward(features, captions) on " + model_describe,
        ),
        "parameters": (weights, "the model's parameters after init_state, step and forward on " + model_describe),
    }
    out = student.call(
        "show_and_tell.inputs_after_calls",
        sizes=sizes,
        weights=weights,
        **step_inputs,
        logits=logits,
        targets=targets,
        features=features,
        captions=captions,
        tokens=tokens,
        state=state,
    )
    expect(
        isinstance(out, dict) and all(isinstance(out.get(k), dict) for k in sent),
        f"unexpected result {type_name(out)}",
        model_describe,
    )
    for fn, (tensors, describe) in sent.items():
        for name, before in tensors.items():
            label = f"parameter {name}" if fn == "parameters" else f"{fn}: input {name} after the call"
            expect_tensor(label, out[fn].get(name), before, tolerance=EXACT, case=describe)
    # Inputs left alone by functions that compute nothing mean nothing: each must depend on what it is given.
    _expect_relu_step_depends_on_x(student, step_inputs, step_describe)
    public.expect_loss_depends_on_the_scored_logits(student)
    public.expect_logits_depend_on_the_words_and_image(student)


def _expect_relu_step_depends_on_x(student, inputs: dict, describe: str) -> None:
    moved_inputs = dict(inputs, x=inputs["x"] + 1)
    describe = f"the anchor of inputs left unchanged: {describe}, then x + 1"
    got = [
        expect_float_tensor(
            "relu_rnn_step", student.call("show_and_tell.relu_step", **kw), tuple(inputs["h"].shape), describe
        ).to(F64)
        for kw in (inputs, moved_inputs)
    ]
    expected = [
        public.rnn_cell_oracle(
            kw["x"].to(F64),
            kw["h"].to(F64),
            kw["W_xh"].to(F64),
            kw["W_hh"].to(F64),
            kw["b"].to(F64),
            kw["image_term"].to(F64),
        )
        for kw in (inputs, moved_inputs)
    ]
    moved, should = float((got[0] - got[1]).abs().max()), float((expected[0] - expected[1]).abs().max())
    expect(
        moved > 1e-3 * should,
        f"your relu_rnn_step does not depend on x: its output moves by at most {moved:.3g} "
        f"when x becomes x + 1 (expected {should:.3g})",
        describe,
    )


def _expect_recall(student, scores, k, describe):
    """The public check's recall comparison, with the reference's answers."""
    public._expect_recall(student, scores, k, describe, public.expected_recalls(reference, scores, k))


@check()
def retrieval_on_full_size_inputs(student, ctx):
    """retrieval_scores at full size and recall_at_k on larger tied matrices are right and leave their inputs alone."""

    @examples(5)
    @given(full_size_retrieval_cases, larger_ranking_cases)
    def prop(retrieval_case, ranking_case):
        _retrieval_property(student, retrieval_case, locs=4, d=3)
        seed, n, distinct, k = ranking_case
        _expect_recall(student, ranking_scores(seed, n, distinct), min(k, n), f"scores ({n}, {n}), seed={seed}")

    prop()
