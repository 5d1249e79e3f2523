"""Part 2: inference. Greedy decoding, beam search and sampling with a temperature.

Every decoder here works with any captioner that follows the decoding protocol:

    state = model.init_state(features)                 # a tuple of tensors, batch first
    log_probs, state = model.step(tokens, state)      # tokens (N,) long -> log_probs (N, V)

Greedy decoding commits to the argmax word at every step. Beam search keeps the k most probable
partial captions: with k = 1 it is greedy decoding, and with k at least the number of possible
sequences it is exhaustive search. Sampling draws each word from softmax(log_probs / temperature).
In every output, each position after the first END holds PAD.
"""
# Generated from the reference decoding.py by `python -m instructor stubs`; do not edit by hand.
from __future__ import annotations

import torch

from shared.vocab import END, PAD, START


def reorder_state(state: tuple[torch.Tensor, ...], index: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Re-index every tensor of a recurrent state along the batch dimension: state[i][index]."""
    return tuple(s.index_select(0, index) for s in state)


def _batch_size(state: tuple[torch.Tensor, ...]) -> int:
    if not isinstance(state, tuple) or not state or not all(isinstance(s, torch.Tensor) for s in state):
        raise TypeError(f"state: expected a non-empty tuple of tensors (batch first), got {type(state).__name__}")
    return state[0].shape[0]


def _check_max_len(max_len: int) -> None:
    if not isinstance(max_len, int) or max_len < 1:
        raise ValueError(f"max_len: expected a positive int, got {max_len!r}")


@torch.no_grad()
def greedy_decode(model, state: tuple[torch.Tensor, ...], max_len: int) -> torch.Tensor:
    """Greedy decoding: feed START, take the argmax word, feed it back.

    Args:
        model: a captioner with step(tokens (N,), state) -> (log_probs (N, V), state).
        state: the model's initial state for N images (from model.init_state).
        max_len: number of words to emit.
    Returns:
        tokens: LongTensor (N, max_len) on the state's device; every position after the first END is PAD.
    """
    n = _batch_size(state)
    _check_max_len(max_len)
    # TODO (Part 2): implement greedy_decode
    raise NotImplementedError("Part 2 (decoding): greedy_decode is not implemented yet")


@torch.no_grad()
def beam_search(model, state: tuple[torch.Tensor, ...], k: int, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Batched beam search of width k.

    Args:
        model, state, max_len: as for greedy_decode.
        k: beam width (>= 1).
    Returns:
        tokens: LongTensor (N, k, max_len), best beam first; PAD after END.
        scores: (N, k) total log-probability of each returned sequence: the sum of the log-probabilities
            of its tokens up to and including END (PAD after END costs nothing). Sorted best first.
            Where fewer than k distinct hypotheses exist, the missing rows score -inf (tokens unspecified).
    A beam that has emitted END is frozen: its only continuation is PAD, at no cost.
    k = 1 gives greedy decoding; a beam at least as wide as the number of sequences gives exhaustive search.
    """
    n = _batch_size(state)
    _check_max_len(max_len)
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k: expected a positive int, got {k!r}")
    # TODO (Part 2): implement beam_search
    raise NotImplementedError("Part 2 (decoding): beam_search is not implemented yet")


@torch.no_grad()
def sample_captions(model, state: tuple[torch.Tensor, ...], temperature: float, max_len: int,
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """Sample each word from softmax(log_probs / temperature).

    Args:
        model, state, max_len: as for greedy_decode.
        temperature: > 0; near 0 approaches greedy decoding, 1 is the model's own distribution.
        generator: a torch.Generator on the state's device (None: torch's global generator).
    Returns:
        tokens: LongTensor (N, max_len); PAD after END. The same generator state gives the same captions.
    Any exact sampler is correct (torch.multinomial, inverse CDF, Gumbel-max).
    """
    n = _batch_size(state)
    _check_max_len(max_len)
    if not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"temperature: expected a number > 0, got {temperature!r}")
    # TODO (Part 2): implement sample_captions
    raise NotImplementedError("Part 2 (decoding): sample_captions is not implemented yet")
