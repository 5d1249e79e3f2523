"""The image encoder: a small CNN pretrained on attribute recognition, and the cached annotation grid.

Our stand-in for an ImageNet-pretrained VGG: a three-layer CNN whose linear head predicts the
7 attributes of a scene (which colours and shapes are present). After pretraining the head is
dropped and the last convolutional volume is kept: an 8 x 8 grid of 48-d annotation vectors,
L = 64 locations of width D = 48, computed once for every scene. The head's sigmoid outputs are
kept too: they are the predicted attributes that LSTM-A injects.
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from shared.scenes import IMG, N_ATTRIBUTES, Scenes, make_scenes
from shared.training import History, seed_everything, train

GRID, D_ANN = 8, 48
L_GRID = GRID * GRID


class Encoder(nn.Module):
    """images (N, 3, 32, 32) -> annotation grid (N, L=64, D): an 8x8 grid of 4x4-pixel cells, row-major."""

    def __init__(self, D: int = D_ANN):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(8, 16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.GroupNorm(8, 32), nn.ReLU(),  # 16 x 16
            nn.Conv2d(32, D, 3, stride=2, padding=1), nn.GroupNorm(8, D), nn.ReLU())    # 8 x 8

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        if images.dim() != 4 or tuple(images.shape[1:]) != (3, IMG, IMG):
            raise ValueError(f"images: expected shape (N, 3, {IMG}, {IMG}), got {tuple(images.shape)}")
        return self.net(images - 0.5).flatten(2).transpose(1, 2)


class AttrNet(nn.Module):
    """Encoder + a linear head over the flattened grid predicting the 7 attribute logits."""

    def __init__(self, D: int = D_ANN, n_attr: int = N_ATTRIBUTES):
        super().__init__()
        self.enc = Encoder(D)
        self.head = nn.Linear(D * L_GRID, n_attr)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(images).flatten(1))


def pretrain_encoder(scenes: Scenes, n: int = 2000, epochs: int = 8, batch_size: int = 32, lr: float = 3e-3,
                     seed: int = 0) -> tuple[AttrNet, History]:
    """Pretrain an AttrNet on the first n training scenes (binary cross-entropy on the 7 attributes)."""
    if n > len(scenes):
        raise ValueError(f"n: expected at most {len(scenes)} pretraining scenes, got {n}")
    seed_everything(seed)
    net = AttrNet()
    def loss_fn(m, idx):
        return F.binary_cross_entropy_with_logits(m(scenes.images[idx]), scenes.attributes[idx])
    return net, train(net, loss_fn, n, epochs, batch_size, lr, seed)


@torch.no_grad()
def encode_scenes(net: AttrNet, images: torch.Tensor, chunk: int = 500) -> tuple[torch.Tensor, torch.Tensor]:
    """(grids (N, 64, 48), predicted attribute probabilities (N, 7)) for a batch of images."""
    net.eval()
    grids, probs = [], []
    for i in range(0, len(images), chunk):
        g = net.enc(images[i:i + chunk])
        grids.append(g)
        probs.append(torch.sigmoid(net.head(g.flatten(1))))
    return torch.cat(grids), torch.cat(probs)


@dataclass
class Split:
    """One split with its encoder outputs: grids (N, 64, 48), predicted attributes (N, 7)."""
    scenes: Scenes
    grids: torch.Tensor
    predicted_attributes: torch.Tensor

    def __len__(self) -> int:
        return len(self.scenes)


@dataclass
class CaptionData:
    train: Split
    test: Split
    encoder_accuracy: float          # test fraction of scenes with all 7 attributes right
    encoder_cpu_seconds: float
    cache_file: Path | None = None   # the file holding the encoder outputs (tr_grid, tr_attr, te_grid, te_attr)
    retrieval: Split | None = None   # a third split of its own seed (load_data's retrieval_seed), else None


def cache_dir() -> Path:
    """Where the encoder outputs are cached: $CAPTIONKIT_CACHE, default ./.cache/captionkit."""
    return Path(os.environ.get("CAPTIONKIT_CACHE", Path.cwd() / ".cache" / "captionkit"))


def user_cache() -> Path:
    """The students' cache when $CAPTIONKIT_CACHE is unset (the notebooks', `check --train`'s): captionkit/ in the
    user's cache folder ($XDG_CACHE_HOME, else ~/.cache), never the student's folder (a few hundred MB, rebuilt in
    seconds)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "captionkit"


def load_data(train_seed: int = 0, test_seed: int = 1, n_train: int = 6000, n_test: int = 400,
              max_objects: int = 2, cache: bool = True, retrieval_seed: int | None = None,
              n_retrieval: int = 400) -> CaptionData:
    """Generate both splits, pretrain the encoder on the training split, and encode every scene.

    With `retrieval_seed`, also a third split of `n_retrieval` scenes drawn from that seed and encoded by the same
    encoder (CaptionData.retrieval; the grader ranks images by a trained model's p(caption | image) on it).

    The encoder outputs are cached on disk (directory $CAPTIONKIT_CACHE, default ./.cache/captionkit),
    keyed by every argument and the torch version; the scenes are regenerated, which takes well under a second.
    """
    key = json.dumps(dict(v=1, train_seed=train_seed, test_seed=test_seed, n_train=n_train, n_test=n_test,
                          max_objects=max_objects, torch=torch.__version__, threads=torch.get_num_threads(),
                          # only when asked for: the caches of the two-split data keep their names
                          **({} if retrieval_seed is None else dict(retrieval_seed=retrieval_seed,
                                                                    n_retrieval=n_retrieval))),
                     sort_keys=True)
    path = cache_dir() / f"grids-{hashlib.sha256(key.encode()).hexdigest()[:16]}.pt"
    with _building(path if cache and not path.exists() else None):
        return _load_or_build(path, cache, train_seed, test_seed, n_train, n_test, max_objects, retrieval_seed,
                              n_retrieval)


@contextmanager
def _building(path: Path | None):
    """Held while this process builds the missing cache file `path` (None: nothing to build, no lock): processes that
    start at once on an empty cache (the graders of a batch, the test suite's workers) pretrain the encoder once, not
    once each; the others wait, then find the file. Without a lock to take (no fcntl, a read-only cache folder) each
    builds its own, as before."""
    lock = None
    if path is not None:
        try:
            import fcntl
            path.parent.mkdir(parents=True, exist_ok=True)
            lock = open(path.with_suffix(".lock"), "a")
            fcntl.flock(lock, fcntl.LOCK_EX)
        except (ImportError, OSError):
            if lock is not None:
                lock.close()
            lock = None
    try:
        yield
    finally:
        if lock is not None:
            lock.close()


def _load_or_build(path: Path, cache: bool, train_seed: int, test_seed: int, n_train: int, n_test: int,
                   max_objects: int, retrieval_seed: int | None, n_retrieval: int) -> CaptionData:
    """load_data's body, under _building's lock."""
    hit = cache and path.exists()
    train_scenes = make_scenes(n_train, train_seed, max_objects, keep_images=not hit)
    test_scenes = make_scenes(n_test, test_seed, max_objects, keep_images=not hit)
    retrieval_scenes = (None if retrieval_seed is None else
                        make_scenes(n_retrieval, retrieval_seed, max_objects, keep_images=not hit))
    if hit:  # memory-mapped: pages are read when touched and shared with every process mapping the file
        saved = torch.load(path, weights_only=True, mmap=True)
    else:
        net, history = pretrain_encoder(train_scenes, n=min(2000, n_train))
        tr_grid, tr_attr = encode_scenes(net, train_scenes.images)
        te_grid, te_attr = encode_scenes(net, test_scenes.images)
        accuracy = ((te_attr > 0.5).float() == test_scenes.attributes).all(1).float().mean().item()
        saved = dict(tr_grid=tr_grid, tr_attr=tr_attr, te_grid=te_grid, te_attr=te_attr,
                     accuracy=torch.tensor(accuracy), cpu=torch.tensor(history.cpu_seconds))
        if retrieval_scenes is not None:
            saved["re_grid"], saved["re_attr"] = encode_scenes(net, retrieval_scenes.images)
        if cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            torch.save(saved, tmp)
            os.replace(tmp, path)
            saved = torch.load(path, weights_only=True, mmap=True)
    retrieval = None if retrieval_scenes is None else Split(retrieval_scenes, saved["re_grid"], saved["re_attr"])
    return CaptionData(Split(train_scenes, saved["tr_grid"], saved["tr_attr"]),
                       Split(test_scenes, saved["te_grid"], saved["te_attr"]),
                       float(saved["accuracy"]), float(saved["cpu"]), path if cache else None, retrieval)
