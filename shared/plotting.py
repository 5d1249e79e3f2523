"""Plotting helpers for notebooks and reports: scenes, attention overlays, curves. Matplotlib only."""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

from shared.scenes import IMG


def show_img(ax, img, title: str | None = None) -> None:
    """Draw a (3, H, W) tensor (any device) or an (H, W, 3) array without axes."""
    if torch.is_tensor(img):
        img = img.detach().cpu().numpy()
    if img.ndim == 3 and img.shape[0] == 3:
        img = img.transpose(1, 2, 0)
    ax.imshow(np.clip(img, 0, 1), interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title, fontsize=8)


def overlay_attention(ax, img, weights, title: str | None = None, grid: int = 8) -> None:
    """Draw the image with an attention map (L = grid * grid,) as a translucent heat map on top."""
    weights = np.asarray(torch.as_tensor(weights).detach().cpu(), dtype=np.float32)
    if weights.size != grid * grid:
        raise ValueError(f"weights: expected {grid * grid} values for a {grid}x{grid} grid, got {weights.size}")
    show_img(ax, img, title)
    up = np.kron(weights.reshape(grid, grid), np.ones((IMG // grid, IMG // grid)))
    ax.imshow(up, cmap="inferno", alpha=0.55, vmin=0, vmax=max(float(up.max()), 1e-6), interpolation="nearest")


def scene_grid(images, titles: Sequence[str], cols: int = 4, size: float = 3.0):
    """A figure of scenes with a title under each; returns the figure."""
    rows = (len(titles) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(size * cols, size * rows * 1.1), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, img, title in zip(axes.flat, images, titles):
        show_img(ax, img, title)
    fig.tight_layout()
    return fig


def loss_curves(curves: dict[str, Sequence[float]], title: str = "training loss"):
    """One line per named curve of per-epoch losses; returns the figure."""
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for name, losses in curves.items():
        ax.plot(range(1, len(losses) + 1), losses, marker="o", ms=3, label=name)
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
