"""The captioning vocabulary: 27 tokens, and caption <-> token-id conversion.

Token ids 0, 1, 2 are PAD, START and END. Then come the 13 factual words every
caption is built from, then 11 words that only the StyleNet part's romantic
captions use.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

PAD, START, END = 0, 1, 2
COLOR_WORDS = ("red", "green", "blue", "yellow")
SHAPE_WORDS = ("circle", "square", "triangle")
FACT_WORDS = ("<pad>", "<start>", "<end>", "a", "of", "above", "below", "left", "right") + COLOR_WORDS + SHAPE_WORDS
STYLE_WORDS = ("the", "sits", "happily", "hides", "shyly", "waits", "quietly", "smiles", "brightly", "with", "nearby")
VOCAB = FACT_WORDS + STYLE_WORDS
WORD_TO_ID = {word: index for index, word in enumerate(VOCAB)}
VOCAB_SIZE = len(VOCAB)
STYLE_IDS = tuple(WORD_TO_ID[word] for word in STYLE_WORDS)

T_MAX = 10  # <start> + up to 8 words + <end>


def encode(caption: str, length: int = T_MAX) -> list[int]:
    """'a red circle above a blue square' -> [START, ids..., END, PAD, ...] of exactly `length` ids.

    Raises ValueError for an empty caption, an unknown word, or a caption too long for `length`.
    """
    if not isinstance(caption, str):
        raise TypeError(f"caption: expected a str, got {type(caption).__name__}")
    words = caption.split()
    if not words:
        raise ValueError("caption: expected at least one word, got an empty caption")
    unknown = [w for w in words if w not in WORD_TO_ID or WORD_TO_ID[w] in (PAD, START, END)]
    if unknown:
        raise ValueError(f"caption: unknown word(s) {unknown!r} in {caption!r}; the vocabulary is {list(VOCAB[3:])}")
    ids = [START] + [WORD_TO_ID[w] for w in words] + [END]
    if len(ids) > length:
        raise ValueError(f"caption: {len(words)} words need length >= {len(ids)}, got length={length}: {caption!r}")
    return ids + [PAD] * (length - len(ids))


def encode_batch(captions: Sequence[str], length: int = T_MAX) -> torch.Tensor:
    """A list of captions -> LongTensor (N, length)."""
    return torch.tensor([encode(c, length) for c in captions], dtype=torch.long)


def decode(ids: Iterable[int]) -> str:
    """Token ids -> caption, stopping at the first END and skipping PAD and START.

    Raises ValueError for an id outside the vocabulary.
    """
    words = []
    for raw in ids:
        i = int(raw)
        if not 0 <= i < VOCAB_SIZE:
            raise ValueError(f"ids: token id {i} is outside the vocabulary [0, {VOCAB_SIZE})")
        if i == END:
            break
        if i not in (PAD, START):
            words.append(VOCAB[i])
    return " ".join(words)


def decode_batch(tokens: torch.Tensor) -> list[str]:
    """LongTensor (N, T) of token ids (any device) -> N caption strings."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
        raise ValueError(f"tokens: expected a 2-d tensor (N, T), got {getattr(tokens, 'shape', type(tokens))}")
    return [decode(row) for row in tokens.detach().cpu().tolist()]
