"""Small split files for the tests that run a training recipe in this process (a real split holds 6000 scenes)."""

from pathlib import Path

import torch

from shared.encoder import D_ANN, L_GRID
from shared.scenes import make_scenes


def write_split(folder: Path, n_train: int, n_test: int, offset: float = 0.0) -> str:
    """A split file as autograder.grader.training.share_split writes it, in `folder`: `n_train` training scenes and
    `n_test` test grids, random grids (seeded) plus `offset`; returns its path for a recipe's `data`."""
    g = torch.Generator().manual_seed(0)
    encoder_file = folder / "encoder.pt"
    torch.save(
        {
            "tr_grid": torch.randn(n_train, L_GRID, D_ANN, generator=g) + offset,
            "tr_attr": torch.zeros(n_train, 1),
            "te_grid": torch.randn(n_test, L_GRID, D_ANN, generator=g) + offset,
            "te_attr": torch.zeros(n_test, 1),
        },
        encoder_file,
    )
    scenes = make_scenes(n_train, 5, keep_images=False)
    index = folder / "split.pt"
    torch.save({"tokens": scenes.tokens, "targets": list(scenes.targets), "encoder_file": str(encoder_file)}, index)
    return str(index)
