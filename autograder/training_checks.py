"""Plumbing shared by the training checks: hand the hidden inputs to the worker, read back predictions."""
from __future__ import annotations

import torch

from autograder.compare import CheckFailed, type_name
from autograder.context import GradingContext
from shared.metrics import exact_match
from shared.vocab import decode_batch


def share_split(ctx: GradingContext, with_attributes: bool = False) -> str:
    """Path of a file holding the hidden training grids and tokens and the hidden test grids (inputs only:
    the test references never leave the grading process)."""
    def make():
        data = ctx.data
        tensors = {"grids": data.train.grids, "tokens": data.train.scenes.tokens, "test_grids": data.test.grids}
        if with_attributes:
            tensors.update(attributes=data.train.predicted_attributes,
                           test_attributes=data.test.predicted_attributes)
        return tensors
    return ctx.share("hidden-split" + ("-attributes" if with_attributes else ""), make, ctx.scratch / "shared")


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
