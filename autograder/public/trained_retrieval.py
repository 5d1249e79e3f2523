"""Part 1's trained retrieval: recall@1 of the student's retrieval_scores with the trained model, on scenes whose
captions are told apart (distinct_scenes), the captions sent in an order only the judge knows (RetrievalSet).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from autograder.public import limits
from autograder.public.client.replies import KINDS
from autograder.public.compare import CheckFailed, type_name
from autograder.public.training_verdicts import reply
from autograder.worker.protocol import clean
from shared.encoder import Split


@dataclass(frozen=True)
class RetrievalSet:
    """The retrieval scenes as the worker gets them: the images in scene order, the captions in an order only the
    judge knows, so a scorer returning a diagonal (or anything but the model's scores) ranks as chance."""

    features: torch.Tensor  # (N, L, D) float: the grids of N scenes whose captions are told apart (distinct_scenes)
    captions: torch.Tensor  # (N, T) long: sent caption c is the target caption of scene order[c]
    order: torch.Tensor  # (N,) long: a permutation of 0 .. N-1


def distinct_scenes(targets: list[str], references: list[list[str]]) -> list[int]:
    """The scenes kept, in order: scene k unless its target caption is a reference of a scene kept before it or one
    of its references is such a scene's target. Between kept scenes the right image of a caption is then the only
    one it describes (the split draws many scenes per caption: the lecture counted 30 of one caption in 6000)."""
    kept, kept_targets, kept_references = [], set(), set()
    for k, (target, refs) in enumerate(zip(targets, references)):
        if target in kept_references or kept_targets.intersection(refs):
            continue
        kept.append(k)
        kept_targets.add(target)
        kept_references.update(refs)
    return kept


def retrieval_set(split: Split, seed: int) -> RetrievalSet:
    """The distinct scenes of `split`, their captions in an order drawn from `seed`."""
    kept = torch.tensor(distinct_scenes(list(split.scenes.targets), [list(r) for r in split.scenes.references]))
    order = torch.randperm(len(kept), generator=torch.Generator().manual_seed(seed))
    captions = split.scenes.tokens[kept]
    return RetrievalSet(split.grids[kept].float().clone(), captions[order].clone(), order)


def retrieval_inputs(path: str) -> dict:
    """The recipe's inputs of the trained retrieval: the file of the retrieval set's features and captions (in the
    order sent: {"features", "captions"}), and how long the student's retrieval_scores may run the trained model
    (LIMITS.retrieval)."""
    return {"retrieval": path, "retrieval_seconds": limits.LIMITS.retrieval}


def recall_at_1_of(out, order: torch.Tensor) -> float:
    """Caption-to-image recall@1 of the retrieval scores a run returned (an (N, N) float matrix, rows the images in
    scene order, columns the captions in the order sent), once the columns are put back in scene order (`order`);
    ties count against the true image. Raises CheckFailed naming what is malformed; what the student's code raised
    is in its message, and only that it raised in its `safe` text."""
    got = reply(out, "retrieval")
    if isinstance(got, dict) and "raised" in got:
        kind, message = got.get("raised"), got.get("message")
        if not isinstance(kind, str) or not isinstance(message, str):
            raise CheckFailed("retrieval_scores on the trained model: unexpected reply")
        # The kind and the message are the student's code's choice while it held the retrieval split: a hidden check
        # shows neither (A58).
        kind = kind if kind in KINDS else "Exception"
        raise CheckFailed(
            f"retrieval_scores on the trained model raised {kind}: {clean(message, 300)}",
            safe="retrieval_scores on the trained model raised an exception",
        )
    scores = reply(got, "scores")
    n = len(order)
    if not (isinstance(scores, torch.Tensor) and scores.dim() == 2 and scores.is_floating_point()):
        got_text = (
            f"{scores.dtype} of shape {tuple(scores.shape)}" if isinstance(scores, torch.Tensor) else type_name(scores)
        )
        text = f"retrieval_scores on the trained model: expected a floating (images, captions) tensor, got {got_text}"
        raise CheckFailed(text, safe=text)
    if tuple(scores.shape) != (n, n):
        text = "retrieval_scores on the trained model: expected one row per image and one column per caption"
        raise CheckFailed(f"{text} ({n}, {n}), got {tuple(scores.shape)}", safe=text)
    if not bool(torch.isfinite(scores).all()):
        text = "retrieval_scores on the trained model returned values that are not finite"
        raise CheckFailed(text, safe=text)
    in_scene_order = scores.detach().double()[:, torch.argsort(order)]
    # recall@1 only: a caption's true image must score strictly above every other image of its column
    best_other = in_scene_order.masked_fill(torch.eye(n, dtype=torch.bool), float("-inf")).max(0).values
    return (in_scene_order.diagonal() > best_other).double().mean().item()
