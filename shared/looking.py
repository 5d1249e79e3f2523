"""Where to look, learnt by REINFORCE alone: the task Part 5's training check adds to its captions.

For an object of a scene, named by its colour and shape, a look policy puts weights on the encoder's GRID x GRID
cells (a query from the name against a key per cell, from the cell's annotation and coordinates; softmax over the
cells). The student's `sample_location` draws a cell, the reward is 1 when the cell holds a pixel of the named object
and 0 otherwise, the student's `update_baseline` keeps the baseline and the student's `reinforce_loss` is the only
loss. The rewards depend on nothing the policy computes, so the score-function term is all the policy learns from:
a wrong sign learns to look away, log-probabilities without a gradient learn nothing (the kit's threshold notes).

Its score on test scenes: for every object, the weight the policy puts on that object's cells (the expected reward
of one look), averaged over the objects. The policy is asked about every name on every test scene (`look_weights`),
so what it is given says nothing of which objects a test scene holds.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from shared.encoder import GRID
from shared.scenes import COLORS, IMG, SHAPES, shape_mask

NAMES = tuple((colour, shape) for colour in COLORS for shape in SHAPES)  # every object name, colour first
CELL = IMG // GRID  # pixels per grid cell, each way
EPOCHS, BATCH_SIZE, LR = 2, 64, 1e-2  # about 1 CPU s a run (calibrated in the kit's threshold notes)


def objects_of(objects: list[list[dict]]) -> dict[str, torch.Tensor]:
    """Every object of every scene (shared.scenes.Scenes.objects): "scene" (M,) its scene's index, "name" (M,) its
    index in NAMES, "cells" (M, GRID * GRID) bool, the cells holding a pixel of it (row-major, as with_coords numbers
    them)."""
    scenes, names, cells = [], [], []
    for i, scene in enumerate(objects):
        for o in scene:
            mask = shape_mask(o["shape"], o["cx"], o["cy"], o["r"]).reshape(GRID, CELL, GRID, CELL).any(axis=(1, 3))
            scenes.append(i)
            names.append(NAMES.index((o["color"], o["shape"])))
            cells.append(mask.reshape(-1))
    return {
        "scene": torch.tensor(scenes, dtype=torch.long),
        "name": torch.tensor(names, dtype=torch.long),
        "cells": torch.from_numpy(np.stack(cells)) if cells else torch.zeros(0, GRID * GRID, dtype=torch.bool),
    }


class LookPolicy(nn.Module):
    """Weights (B, L) over the L cells of a scene for a named object: softmax of a query from the name (one-hot over
    NAMES) against a key per cell."""

    def __init__(self, feature_dim: int, d: int = 32):
        super().__init__()
        self.query = nn.Embedding(len(NAMES), d)
        self.key = nn.Linear(feature_dim, d)

    def forward(self, features: torch.Tensor, names: torch.Tensor) -> torch.Tensor:
        scores = torch.einsum("bd,bld->bl", self.query(names), self.key(features)) / self.query.embedding_dim**0.5
        return torch.softmax(scores, -1)

    def every_name(self, features: torch.Tensor) -> torch.Tensor:
        """Weights (N, len(NAMES), L) for every name on each of the N scenes: forward's, with each scene's keys
        computed once instead of once per name."""
        queries = self.query.weight  # (len(NAMES), d): the embedding of every name, in NAMES' order
        scores = torch.einsum("nd,bld->bnl", queries, self.key(features)) / self.query.embedding_dim**0.5
        return torch.softmax(scores, -1)


def train_look_policy(student, features: torch.Tensor, objects: dict[str, torch.Tensor], seed: int) -> LookPolicy:
    """A LookPolicy trained on the scenes' `features` (N, L, D: annotations with coordinates) and their `objects`
    (objects_of) with the `student` module's sample_location, update_baseline and reinforce_loss, training seed
    `seed`. A loss that carries no gradient leaves the policy as it started."""
    torch.manual_seed(seed)
    policy = LookPolicy(features.shape[-1])
    optimizer = torch.optim.Adam(policy.parameters(), lr=LR)
    order, draws = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed + 1)
    cells = objects["cells"].to(features.dtype)
    baseline = None
    for _ in range(EPOCHS):
        for batch in torch.randperm(len(cells), generator=order).split(BATCH_SIZE):
            weights = policy(features[objects["scene"][batch]], objects["name"][batch])
            index, log_prob = student.sample_location(weights, draws)
            rewards = cells[batch].gather(1, index.view(-1, 1)).squeeze(1)
            baseline = student.update_baseline(baseline, rewards)
            loss = student.reinforce_loss(log_prob, rewards, baseline)
            optimizer.zero_grad()
            if isinstance(loss, torch.Tensor) and loss.requires_grad:
                loss.backward()
                optimizer.step()
    return policy


def look_weights(policy: LookPolicy, features: torch.Tensor) -> torch.Tensor:
    """(N, len(NAMES), L) float32: the policy's weights for every name on every scene of `features` (N, L, D)."""
    with torch.no_grad():
        return policy.every_name(features).float()


def look_score(weights: torch.Tensor, objects: dict[str, torch.Tensor]) -> float:
    """The mean, over every object of `objects` (objects_of of the scenes `weights` were asked about), of the weight
    its name's row puts on its cells."""
    rows = weights[objects["scene"], objects["name"]]
    return float((rows * objects["cells"].to(rows.dtype)).sum(1).mean())
