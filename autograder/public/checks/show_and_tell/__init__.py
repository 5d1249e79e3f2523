"""Part 1 public checks: the ReLU step against nn.RNNCell, the masked loss against an enumerated oracle, the
captioner's init_state and step against their closed forms, forward against nn.RNN and against nn.RNNCell unrolled with
the image at the first step, and the student's own step-by-step decoding against the student's own forward (weights
injected by the grader, so nothing depends on how the student's model was initialised); then the retrieval functions
on a toy captioner whose logits the grader computes itself (autograder.worker.toys), recall@k against the enumerated
rank of each true image, and the lab's image controls. (The part's hidden checks
and its training check run in the grader, after the deadline.)

Expected values are computed here in float64: by nn.RNNCell / nn.RNN with explicitly injected weights, or by
enumerating the loss term by term; never from a reference solution. Student code runs in float32 (the contract's
dtype) and, for relu_rnn_step, also in float64, where the tolerance tightens when the answer is float64.

The checks live in this package's modules, in the order they run: cells (the ReLU step), loss (caption_loss),
model (ShowTellRNN), retrieval (caption_log_probs and retrieval_scores), recall (recall_at_k, with its golden data) and
controls (the image controls). This module imports them in that order, and holds the names other modules read from
the part's checks: the hidden checks' helpers, golden_cases and FINGERPRINT.
"""

from __future__ import annotations

# The modules in the order their checks register, which is the part's order of checks (isort would sort them);
# each name imported from one is a name other modules read from the package.
# isort: off
from autograder.public.checks.show_and_tell import cells
from autograder.public.checks.show_and_tell.cells import F64, _randn, _relu_step_property, _step_inputs, rnn_cell_oracle
from autograder.public.checks.show_and_tell import loss
from autograder.public.checks.show_and_tell.loss import (
    _loss_inputs,
    _loss_value_and_gradient_property,
    expect_loss_depends_on_the_scored_logits,
)
from autograder.public.checks.show_and_tell import model
from autograder.public.checks.show_and_tell.model import (
    _forward,
    _model_inputs,
    expect_logits_depend_on_the_words_and_image,
    image_term_oracle,
    recurrence_oracle,
    step_oracle,
)
from autograder.public.checks.show_and_tell import retrieval
from autograder.public.checks.show_and_tell.retrieval import _retrieval_property
from autograder.public.checks.show_and_tell import recall
from autograder.public.checks.show_and_tell.recall import (
    FINGERPRINT,
    RECALL_CASES,
    _expect_recall,
    _recall_ks,
    expected_recalls,
    golden_cases,
    ranking_scores,
)
from autograder.public.checks.show_and_tell import controls
# isort: on

__all__ = [
    "F64",
    "FINGERPRINT",
    "RECALL_CASES",
    "_expect_recall",
    "_forward",
    "_loss_inputs",
    "_loss_value_and_gradient_property",
    "_model_inputs",
    "_randn",
    "_recall_ks",
    "_relu_step_property",
    "_retrieval_property",
    "_step_inputs",
    "cells",
    "controls",
    "expect_logits_depend_on_the_words_and_image",
    "expect_loss_depends_on_the_scored_logits",
    "expected_recalls",
    "golden_cases",
    "image_term_oracle",
    "loss",
    "model",
    "ranking_scores",
    "recall",
    "recurrence_oracle",
    "retrieval",
    "rnn_cell_oracle",
    "step_oracle",
]
