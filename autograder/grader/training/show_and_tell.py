"""Part 1's training check, and the retrieval reply check graded on the same run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import torch
from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.keeping import SHOWN
from autograder.grader.training.spec import SPECS, ReplyCheck, TrainingSpec, greedy_reply, training_check
from autograder.public.published_training import PUBLISHED
from autograder.public.trained_retrieval import RetrievalSet, recall_at_1_of, retrieval_inputs
from autograder.public.trained_retrieval import retrieval_set as retrieval_set_of
from shared.training import seed_everything, train

# -- Part 1: Show and Tell -------------------------------------------------------------------------------------


def _show_and_tell_reference(
    ctx: GradingContext, seed: int, epochs: int, prepared=None, watch: Callable[[nn.Module], Callable] | None = None
) -> nn.Module:
    from solutions.show_and_tell import ShowTellRNN, caption_loss

    spec = SPECS["show_and_tell"]
    grids, tokens = ctx.data.train.grids, ctx.data.train.scenes.tokens
    seed_everything(seed)
    model = ShowTellRNN()
    model.history = train(
        model,
        lambda m, idx: caption_loss(m(grids[idx], tokens[idx]), tokens[idx]),
        len(tokens),
        epochs,
        spec.batch_size,
        spec.lr,
        seed=seed,
        on_epoch=watch(model) if watch else None,
    )
    return model


def _show_and_tell_reply(model: nn.Module, ctx: GradingContext) -> dict:
    """What train_and_decode returns for `model`: its greedy captions of the test grids and its retrieval scores."""
    from solutions.show_and_tell import retrieval_scores

    retrieval = hidden_retrieval_set(ctx)
    with torch.no_grad():
        scores = retrieval_scores(model, retrieval.features, retrieval.captions)
    return {**greedy_reply(model, model.init_state(ctx.data.test.grids)), "retrieval": {"scores": scores}}


# -- Part 1's retrieval: the lecture's section 9, ranked by the student's retrieval_scores with the trained model ---


def hidden_retrieval_set(ctx: GradingContext) -> RetrievalSet:
    """The retrieval set of this grading run: the distinct scenes of ctx.retrieval_split (the hidden retrieval split),
    captions in an order drawn from a seed derived from the test secret (the same in every run: a submission's grade
    does not move with it); autograder.public.trained_retrieval.retrieval_set."""
    digest = hashlib.sha256(f"{ctx.test_secret:x}:retrieval order".encode()).digest()
    return retrieval_set_of(ctx.retrieval_split, int.from_bytes(digest[:7], "big"))


def retrieval_file(ctx: GradingContext) -> dict:
    """The recipe's inputs of the retrieval reply check: a file of the retrieval set's features and captions (in the
    order sent), and how long the student's retrieval_scores may run the trained model (LIMITS.retrieval); the order
    stays in the grading process."""

    def make():
        retrieval = hidden_retrieval_set(ctx)
        return {"features": retrieval.features, "captions": retrieval.captions}

    return retrieval_inputs(ctx.share("retrieval", make))


def trained_recall_at_1(out, ctx: GradingContext) -> float:
    """Caption-to-image recall@1 of the retrieval scores a run returned, in this grading run's caption order
    (autograder.public.trained_retrieval.recall_at_1_of). Raises CheckFailed naming what is malformed."""
    return recall_at_1_of(out, hidden_retrieval_set(ctx).order)


def _broken_retrieval(make_scores: Callable[[nn.Module, RetrievalSet], torch.Tensor]):
    """A broken model's reply for calibrate: the scores make_scores(model, retrieval set) returns."""

    def reply_of(model: nn.Module, ctx: GradingContext) -> dict:
        with torch.no_grad():
            return {"retrieval": {"scores": make_scores(model, hidden_retrieval_set(ctx))}}

    return reply_of


def _reference_scores(model, retrieval, features=None):
    from solutions.show_and_tell import retrieval_scores

    return retrieval_scores(model, retrieval.features if features is None else features, retrieval.captions)


training_check(
    TrainingSpec(
        part="show_and_tell",
        check="trained_show_and_tell_reaches_the_threshold",
        description="Trained for {spec.epochs} epochs on hidden scenes, the captioner reaches the exact-match threshold "
        "in time.",
        published=PUBLISHED["show_and_tell"],
        train_reference=_show_and_tell_reference,
        reference_reply=_show_and_tell_reply,
        options={"shown": SHOWN, "beam_width": 3},  # the beams of the trained model a feedback report shows
        inputs=retrieval_file,
        figures=("beams",),
        reply_checks=(
            ReplyCheck(
                check="trained_show_and_tell_retrieves_the_right_image",
                description="With the model the training check trained, your retrieval_scores ranks each hidden caption's "
                "own image first often enough (recall@1 at least {extra.threshold}).",
                published=PUBLISHED["show_and_tell"].retrieval,
                score=trained_recall_at_1,
                broken={
                    "scores transposed": _broken_retrieval(lambda m, r: _reference_scores(m, r).T),
                    "image features zeroed": _broken_retrieval(
                        lambda m, r: _reference_scores(m, r, torch.zeros_like(r.features))
                    ),
                    "image features of another scene": _broken_retrieval(
                        lambda m, r: _reference_scores(m, r, r.features.roll(1, 0))
                    ),
                    "a diagonal (no model)": _broken_retrieval(lambda m, r: torch.eye(len(r.order))),
                },
            ),
        ),
    )
)
