"""The synthetic captioning data set: 32x32 scenes of coloured shapes with every valid caption.

A scene holds two (optionally three) objects, each a distinct (colour, shape) pair from
4 colours x 3 shapes, placed in distinct cells of a 3x3 layout with a little jitter in
position, size and colour. Each ordered pair of objects gives one reference caption
"a <colour> <shape> <relation> a <colour> <shape>", where the relation is decided by the
layout: rows first (above / below), columns only within a row (left of / right of).
One reference, chosen at random, is the training target; all of them are kept for scoring.

Everything is a pure function of the seed: the same seed gives the same pixels everywhere.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from shared.vocab import COLOR_WORDS, SHAPE_WORDS, T_MAX, encode_batch

IMG = 32
COLORS = {"red": (0.85, 0.15, 0.15), "green": (0.15, 0.70, 0.20), "blue": (0.20, 0.35, 0.90), "yellow": (0.90, 0.80, 0.15)}
SHAPES = SHAPE_WORDS
CELL_CENTERS = (5.5, 15.5, 25.5)  # a 3 x 3 layout of cells, each about 10 px wide
N_ATTRIBUTES = len(COLORS) + len(SHAPES)
assert tuple(COLORS) == COLOR_WORDS

_YS, _XS = np.mgrid[0:IMG, 0:IMG]


def shape_mask(shape: str, cx: float, cy: float, r: float) -> np.ndarray:
    """Boolean (32, 32) pixel mask of a shape centred at (cx, cy) with radius r."""
    if shape == "square":
        return (np.abs(_XS - cx) <= r) & (np.abs(_YS - cy) <= r)
    if shape == "circle":
        return ((_XS - cx) ** 2 + (_YS - cy) ** 2) <= r * r
    if shape == "triangle":  # apex up
        t = (_YS - (cy - r)) / (2.0 * r)
        return (_YS >= cy - r) & (_YS <= cy + r) & (np.abs(_XS - cx) <= r * t)
    raise ValueError(f"shape: expected one of {SHAPES}, got {shape!r}")


def relation(a: dict, b: dict) -> str:
    """The relation word(s) from object a to object b: rows decide first, columns only within a row."""
    if a["row"] != b["row"]:
        return "above" if a["row"] < b["row"] else "below"
    return "left of" if a["col"] < b["col"] else "right of"


def make_scene(rng: np.random.Generator, max_objects: int = 2,
               draw: bool = True) -> tuple[np.ndarray | None, list[dict], list[str]]:
    """One scene: image (32, 32, 3) float32 in [0, 1], its objects, and every reference caption.

    draw=False returns None for the image but takes the same numbers from `rng` (the next scene stays the same), at
    about a third of the cost: for callers that need only the captions (a grade regenerates 6,800 scenes)."""
    n = int(rng.integers(2, max_objects + 1))
    cells = rng.choice(9, size=n, replace=False)
    combos = rng.choice(12, size=n, replace=False)  # distinct (colour, shape) pairs
    noise = rng.normal(0, 0.02, (IMG, IMG, 3))
    img = np.full((IMG, IMG, 3), 0.9, np.float32) + noise.astype(np.float32) if draw else None
    objects = []
    for cell, combo in zip(cells, combos):
        color, shape = COLOR_WORDS[combo // 3], SHAPES[combo % 3]
        row, col = int(cell // 3), int(cell % 3)
        cx = CELL_CENTERS[col] + rng.uniform(-1.5, 1.5)
        cy = CELL_CENTERS[row] + rng.uniform(-1.5, 1.5)
        r = rng.uniform(3.2, 4.2)
        tint = rng.uniform(-0.08, 0.08, 3)
        if draw:
            img[shape_mask(shape, cx, cy, r)] = np.clip(np.array(COLORS[color]) + tint, 0, 1)
        objects.append(dict(color=color, shape=shape, row=row, col=col, cx=float(cx), cy=float(cy), r=float(r)))
    refs = [f"a {objects[i]['color']} {objects[i]['shape']} {relation(objects[i], objects[j])} "
            f"a {objects[j]['color']} {objects[j]['shape']}"
            for i, j in itertools.permutations(range(n), 2)]
    return (np.clip(img, 0, 1) if draw else None), objects, refs


@dataclass
class Scenes:
    """A generated split. images (N, 3, 32, 32) float32 (None when not kept); tokens (N, T_MAX) long (the
    targets, encoded); attributes (N, 7) float32 multi-hot (4 colours then 3 shapes present)."""
    images: torch.Tensor | None
    tokens: torch.Tensor
    objects: list[list[dict]]
    references: list[list[str]]
    targets: list[str]
    attributes: torch.Tensor
    seed: int

    def __len__(self) -> int:
        return len(self.targets)


def attributes(objects_per_scene: list[list[dict]]) -> torch.Tensor:
    """Multi-hot (N, 7): the 4 colours then the 3 shapes present in each scene."""
    rows = [[0.0] * N_ATTRIBUTES for _ in objects_per_scene]   # filled as lists: a tensor write per object is slow
    for row, objects in zip(rows, objects_per_scene):
        for o in objects:
            row[COLOR_WORDS.index(o["color"])] = 1.0
            row[len(COLORS) + SHAPES.index(o["shape"])] = 1.0
    return torch.tensor(rows, dtype=torch.float32).reshape(len(objects_per_scene), N_ATTRIBUTES)


def make_scenes(n: int, seed: int, max_objects: int = 2, keep_images: bool = True) -> Scenes:
    """n scenes from `seed`; one random reference per scene becomes the training target.

    keep_images=False draws the same scenes (same captions, same random stream) without keeping the pixels,
    for callers that only need the captions and the encoder's cached outputs."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected a positive int, got {n!r}")
    if max_objects not in (2, 3):
        raise ValueError(f"max_objects: expected 2 or 3, got {max_objects!r}")
    rng = np.random.default_rng(seed)
    pixels = torch.empty(n, 3, IMG, IMG) if keep_images else None
    objects, references, targets = [], [], []
    for k in range(n):
        img, objs, refs = make_scene(rng, max_objects, draw=keep_images)
        if keep_images:
            pixels[k] = torch.from_numpy(img).permute(2, 0, 1)
        objects.append(objs)
        references.append(refs)
        targets.append(refs[rng.integers(len(refs))])
    return Scenes(pixels, encode_batch(targets, T_MAX), objects, references, targets, attributes(objects), seed)
