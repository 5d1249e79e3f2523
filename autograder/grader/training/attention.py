"""Part 4's training check: soft attention."""

from __future__ import annotations

import torch
from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.keeping import SHOWN
from autograder.grader.training.spec import SPECS, TrainingSpec, greedy_reply, training_check
from autograder.public.published_training import PUBLISHED
from shared.training import seed_everything, train

# -- Part 4: soft attention --------------------------------------------------------------------------------------

ATTENTION_GRID = PUBLISHED["attention"].options["grid"]  # coordinate channels for the 8 x 8 annotation grid


def _attention_inputs(ctx: GradingContext) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden training grids with coordinates, and their captions."""
    from solutions.attention import with_coords

    return with_coords(ctx.data.train.grids, ATTENTION_GRID), ctx.data.train.scenes.tokens


def _attention_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.attention import AttnCaptioner
    from solutions.show_and_tell import caption_loss

    spec = SPECS["attention"]
    grids, tokens = prepared if prepared is not None else _attention_inputs(ctx)
    seed_everything(seed)
    model = AttnCaptioner()
    model.history = train(
        model,
        lambda m, idx: caption_loss(m(grids[idx], tokens[idx])[0], tokens[idx]),
        len(tokens),
        epochs,
        spec.batch_size,
        spec.lr,
        seed=seed,
    )
    return model


def _attention_reply(model: nn.Module, ctx: GradingContext) -> dict:
    from solutions.attention import with_coords

    return greedy_reply(model, model.init_state(with_coords(ctx.data.test.grids, ATTENTION_GRID)))


training_check(
    TrainingSpec(
        part="attention",
        check="trained_soft_attention_reaches_the_threshold",
        description="Trained {spec.epochs} epochs on hidden scenes with coordinates, the captioner reaches the exact-match "
        "threshold in time.",
        published=PUBLISHED["attention"],
        train_reference=_attention_reference,
        prepare=_attention_inputs,
        reference_reply=_attention_reply,
        options={"shown": SHOWN},
        figures=("attention",),
    )
)
