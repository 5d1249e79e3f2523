"""Scores for generated captions: exact match, failure breakdown, style rate and content slots.

The grader scores students' trained models with these functions, never with student code.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from shared.captions import FAILURE_KINDS, classify_failure, content_slots, is_styled


def _same_length(name: str, a: Sequence, b: Sequence) -> None:
    if len(a) != len(b):
        raise ValueError(f"{name}: expected as many captions as reference lists, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError(f"{name}: expected at least one caption, got none")


def exact_match(captions: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Fraction of captions equal, word for word, to one of their scene's references."""
    _same_length("exact_match", captions, references)
    return float(np.mean([c in refs for c, refs in zip(captions, references)]))


def failure_counts(captions: Sequence[str], objects: Sequence[list[dict]],
                   references: Sequence[Sequence[str]]) -> dict[str, int]:
    """How many captions fall in each failure kind (every kind present, zeros included)."""
    _same_length("failure_counts", captions, references)
    counts = Counter(classify_failure(c, o, r) for c, o, r in zip(captions, objects, references))
    return {kind: counts.get(kind, 0) for kind in FAILURE_KINDS}


def style_scores(captions: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float | list[float]]:
    """StyleNet's two scores against the closest reference of each scene.

    style_rate: fraction of captions containing a style word; content_slots: mean accuracy of the
    5 content slots; all_slots: fraction with all 5 right; per_slot: the 5 accuracies.
    """
    _same_length("style_scores", captions, references)
    per_slot = np.zeros(5)
    full, styled = [], []
    for caption, refs in zip(captions, references):
        slots = content_slots(caption)
        best = np.zeros(5, bool)
        for ref in refs:
            target = content_slots(ref)
            match = np.array([a == b for a, b in zip(slots, target)]) if slots else np.zeros(5, bool)
            if match.sum() > best.sum():
                best = match
        per_slot += best
        full.append(best.all())
        styled.append(is_styled(caption))
    per_slot /= len(captions)
    return dict(style_rate=float(np.mean(styled)), content_slots=float(per_slot.mean()),
                all_slots=float(np.mean(full)), per_slot=per_slot.tolist())


