"""Plumbing shared by the training checks: hand the hidden inputs to the worker, read back predictions."""
from __future__ import annotations

import torch

from autograder.compare import CheckFailed, type_name
from autograder.context import GradingContext
from shared.metrics import exact_match
from shared.vocab import decode_batch


def share_split(ctx: GradingContext, with_attributes: bool = False) -> str:
    """Path of a small file naming the hidden inputs for a worker (recipes read it with
    autograder.recipes.load_split): the training tokens and targets, and the encoder's cached outputs
    (grids and predicted attributes of both splits), memory-mapped so the grader and the worker share
    their pages. Inputs only: the test references never leave the grading process."""
    def make():
        data = ctx.data
        return {"tokens": data.train.scenes.tokens, "targets": list(data.train.scenes.targets),
                "encoder_file": ctx.share_file(data.cache_file)}
    return ctx.share("hidden-split", make)


def predicted_tokens(out, n: int, key: str = "tokens") -> torch.Tensor:
    """The (n, T) long token tensor a training recipe returned under `key`."""
    tokens = out.get(key) if isinstance(out, dict) else None
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] != n or tokens.dtype != torch.long:
        raise CheckFailed(f"the trained model's captions: expected a long tensor of shape ({n}, T), got "
                          f"{tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type_name(tokens)}")
    return tokens


def exact_match_of(out, ctx: GradingContext, key: str = "tokens") -> float:
    """Exact match of the returned captions against the hidden test references."""
    test = ctx.data.test.scenes
    try:
        captions = decode_batch(predicted_tokens(out, len(test), key))
    except ValueError as exc:  # a token id outside the vocabulary
        raise CheckFailed(f"the trained model's captions: {exc}") from None
    return exact_match(captions, test.references)
