"""Part 7's training check: StyleNet."""

from __future__ import annotations

import functools

import torch
from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.spec import SPECS, TrainingSpec, training_check
from autograder.public.published_training import PUBLISHED
from shared.vocab import encode_batch

# -- Part 7: StyleNet ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _styled_corpus() -> torch.Tensor:
    from solutions.stylenet import styled_corpus

    return styled_corpus()


def _factual_captions(ctx: GradingContext) -> torch.Tensor:
    """The hidden training targets encoded with length T_STYLE, as the lecture trains StyleNet (the styled corpus
    is built too: neither is timed)."""
    from solutions.stylenet import T_STYLE

    _styled_corpus()
    return encode_batch(ctx.data.train.scenes.targets, T_STYLE)


def _stylenet_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.show_and_tell import caption_loss
    from solutions.stylenet import train_stylenet

    spec = SPECS["stylenet"]
    captions = prepared if prepared is not None else _factual_captions(ctx)
    model, history = train_stylenet(
        ctx.data.train.grids,
        captions,
        _styled_corpus(),
        caption_loss,
        epochs=epochs,
        lr=spec.lr,
        batch_size=spec.batch_size,
        seed=seed,
    )
    model.history = history
    return model


def _stylenet_reply(model: nn.Module, ctx: GradingContext) -> dict:
    from solutions.decoding import greedy_decode
    from solutions.stylenet import T_STYLE

    tokens = {}
    with torch.no_grad():
        for style in ("factual", "romantic"):
            model.set_style(style)
            tokens[style] = greedy_decode(model, model.init_state(ctx.data.test.grids), T_STYLE)
    return {"tokens": tokens}


training_check(
    TrainingSpec(
        part="stylenet",
        check="trained_stylenet_switches_the_style_with_the_factor",
        description="Trained for {spec.epochs} alternating epochs on hidden scenes, swapping the factor switches the style "
        "and keeps the content, in time.",
        published=PUBLISHED["stylenet"],
        train_reference=_stylenet_reference,
        prepare=_factual_captions,
        reference_reply=_stylenet_reply,
        curves={"factual": "factual_losses", "styled": "styled_losses"},
        captions={"factual": ("tokens", "factual"), "romantic": ("tokens", "romantic")},
    )
)
