"""The report's figures: matplotlib (Agg) PNGs as data URIs, so a report is one self-contained file.

Every function takes plain data (what the checks kept, see autograder/grader/training/) and returns a
figure or a data URI; none reads files or the network."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

from shared.plotting import show_img

DPI = 80
STUDENT, REFERENCE = "#c0392b", "#7f8c8d"


def data_uri(fig, dpi: int = DPI) -> str:
    """The figure as a PNG data URI (closed afterwards)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def image_uri(image) -> str:
    """A (3, H, W) or (H, W, 3) image in [0, 1] as a PNG data URI at its own size (the page scales it up)."""
    array = image.detach().cpu().numpy() if torch.is_tensor(image) else np.asarray(image)
    if array.ndim == 3 and array.shape[0] == 3:
        array = array.transpose(1, 2, 0)
    buffer = io.BytesIO()
    plt.imsave(buffer, (np.clip(array, 0, 1) * 255).astype(np.uint8), format="png", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def curves(student: dict[str, Sequence[float]], reference: dict[str, Sequence[float]]):
    """The student's per-epoch training losses (solid) beside the reference's (dashed), one colour per curve."""
    fig, ax = plt.subplots(figsize=(6.2, 3.1))
    names = sorted(set(student) | set(reference))
    colours = {name: [STUDENT, "#2471a3", "#1e8449"][i % 3] for i, name in enumerate(names)}
    for name, values in reference.items():
        ax.plot(
            range(1, len(values) + 1),
            values,
            "--",
            color=REFERENCE if len(names) == 1 else colours[name],
            alpha=0.8,
            lw=1.5,
            label=f"reference{'' if name == 'loss' else ' ' + name} (public data)",
        )
    for name, values in student.items():
        ax.plot(
            range(1, len(values) + 1),
            values,
            "o-",
            ms=3.5,
            lw=2,
            color=colours[name],
            label=f"your model{'' if name == 'loss' else ' ' + name}",
        )
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    return fig


def _overlay(ax, image, weights: torch.Tensor, grid: int) -> None:
    """The scene with the attention map on top: colour and opacity grow with the weight, so the scene stays
    readable where the model does not look."""
    show_img(ax, image)
    size = image.shape[-1]
    w = weights.reshape(grid, grid).float().numpy()
    w = w / max(float(w.max()), 1e-12)
    rgba = plt.get_cmap("inferno")(0.15 + 0.6 * w)
    rgba[..., 3] = 0.85 * np.sqrt(w)
    ax.imshow(rgba, extent=(-0.5, size - 0.5, size - 0.5, -0.5), interpolation="nearest")


def attention(weights: torch.Tensor, words: Sequence[Sequence[str]], images=None, hard: bool = False):
    """One row per scene, one panel per emitted word: the attention map that chose the word, over the scene.
    hard: also outline the location the decoder read (the argmax)."""
    n = len(words)
    cols = max(len(w) for w in words)
    fig, axes = plt.subplots(n, cols, figsize=(1.15 * cols, 1.3 * n), squeeze=False)
    L = weights.shape[-1]
    grid = math.isqrt(L)
    square = grid * grid == L
    for i in range(n):
        for j in range(cols):
            ax = axes[i, j]
            ax.set_xticks([])
            ax.set_yticks([])
            if j >= len(words[i]):
                ax.axis("off")
                continue
            w = weights[i, j]
            if images is not None and square:
                _overlay(ax, images[i], w, grid)
                cell = images[i].shape[-1] / grid
            else:  # no scene image (or no square grid): the map alone
                ax.imshow(
                    w.reshape(grid, grid).numpy() if square else w.reshape(1, -1).numpy(),
                    cmap="inferno",
                    interpolation="nearest",
                )
                cell = 1.0
            ax.set_title(words[i][j], fontsize=9)
            if hard and square:
                r, c = divmod(int(w.argmax()), grid)
                ax.add_patch(
                    plt.Rectangle((c * cell - 0.5, r * cell - 0.5), cell, cell, fill=False, ec="#00bcd4", lw=1.6)
                )
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.94, wspace=0.06, hspace=0.3)
    return fig


def histograms(columns: dict[str, Sequence[float]], maxima: dict[str, float]):
    """The score distribution of each column (a part, or the total), on [0, its maximum]."""
    names = list(columns)
    cols = 4
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 2.3 * rows), squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        values = list(columns[name])
        top = maxima.get(name) or max(values + [1.0])
        ax.hist(
            values, bins=min(20, max(5, int(top))), range=(0, top), color="#2980b9", edgecolor="white", linewidth=0.8
        )
        ax.set_xlim(0, top)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("points", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    return fig
