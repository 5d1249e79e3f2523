"""A REINFORCE-only training task, measured as a candidate for Part 5's trained check (docs/thresholds.md, issue on a
trained check that needs REINFORCE): hard attention learns where to look, and nothing else can teach it.

    python benchmarks/reinforce_bandit.py [--data hidden | public | TRAIN:TEST] [--seeds 20] [--first-seed 0]
                                          [--variant NAME ...] [--epochs 2] [--threads 1]

The task: for a scene and one of its objects (named by its colour and shape), a look policy puts weights on the
encoder's 8 x 8 grid of cells (a query from the object's name against a key per cell, from the cell's annotation
and coordinates, softmax over the 64 cells), the submission's `sample_location` draws one cell, the reward is 1
when that cell holds a pixel of the named object and 0 otherwise, and the submission's `reinforce_loss` (with the
submission's `update_baseline` as its baseline) is the only loss. Its score: on the test scenes, for every object,
the weight the policy puts on that object's cells (the expected reward of one look), averaged; chance is the share of
cells an object covers. The rewards depend on nothing the policy computes, so the score-function term is the only
gradient the policy gets: an estimator with the wrong sign learns to look away, one whose log-probabilities carry
no gradient does not learn at all.

Prints per training seed the score of the reference and of each variant of tests/meta (`--variant`), their CPU
seconds, and the summary (min, mean, sd, max) per run kind.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from shared.encoder import GRID, load_data  # noqa: E402
from shared.scenes import COLORS, SHAPES, shape_mask  # noqa: E402
from shared.training import seed_everything  # noqa: E402
from solutions.attention import with_coords  # noqa: E402

CELL = 32 // GRID  # pixels per grid cell, each way
COLOUR_NAMES, SHAPE_NAMES = list(COLORS), list(SHAPES)


def object_cells(objects: list[list[dict]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every object of every scene: (scene index (M,), its name as colour and shape one-hot (M, 7), the grid cells
    holding a pixel of it (M, 64) float, row-major as with_coords numbers them)."""
    scenes, names, cells = [], [], []
    for i, scene in enumerate(objects):
        for o in scene:
            mask = shape_mask(o["shape"], o["cx"], o["cy"], o["r"]).reshape(GRID, CELL, GRID, CELL).any(axis=(1, 3))
            name = np.zeros(len(COLOUR_NAMES) + len(SHAPE_NAMES), np.float32)
            name[COLOUR_NAMES.index(o["color"])] = 1.0
            name[len(COLOUR_NAMES) + SHAPE_NAMES.index(o["shape"])] = 1.0
            scenes.append(i)
            names.append(name)
            cells.append(mask.reshape(-1).astype(np.float32))
    return torch.tensor(scenes), torch.from_numpy(np.stack(names)), torch.from_numpy(np.stack(cells))


class LookPolicy(nn.Module):
    """weights (B, 64) over the grid's cells for a named object in a scene."""

    def __init__(self, feature_dim: int, name_dim: int, d: int = 32):
        super().__init__()
        self.query = nn.Linear(name_dim, d)
        self.key = nn.Linear(feature_dim, d)

    def forward(self, features: torch.Tensor, names: torch.Tensor) -> torch.Tensor:
        scores = torch.einsum("bd,bld->bl", self.query(names), self.key(features)) / self.query.out_features**0.5
        return torch.softmax(scores, -1)


def load_module(folder: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"bandit_{name}_{abs(hash(str(folder)))}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_and_score(student, data, seed: int, epochs: int, batch_size: int = 64, lr: float = 1e-2) -> float:
    """The look policy trained on the training scenes with the student's estimator; its score on the test scenes."""
    train_features = with_coords(data.train.grids, GRID)
    test_features = with_coords(data.test.grids, GRID)
    scenes, names, cells = object_cells(data.train.scenes.objects)
    test_scenes, test_names, test_cells = object_cells(data.test.scenes.objects)
    seed_everything(seed)
    policy = LookPolicy(train_features.shape[-1], names.shape[-1])
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    order = torch.Generator().manual_seed(seed)
    draws = torch.Generator().manual_seed(seed + 1)
    baseline = None
    for _ in range(epochs):
        for batch in torch.randperm(len(scenes), generator=order).split(batch_size):
            weights = policy(train_features[scenes[batch]], names[batch])
            index, log_prob = student.sample_location(weights, draws)
            rewards = cells[batch].gather(1, index.view(-1, 1)).squeeze(1)
            baseline = student.update_baseline(baseline, rewards)
            loss = student.reinforce_loss(log_prob, rewards, baseline)
            optimizer.zero_grad()
            if isinstance(loss, torch.Tensor) and loss.requires_grad:
                loss.backward()
                optimizer.step()
    with torch.no_grad():
        weights = policy(test_features[test_scenes], test_names)
        return float((weights * test_cells).sum(1).mean())


def chance(data) -> float:
    """The score of uniform weights: the mean share of the 64 cells an object of a test scene covers."""
    _, _, cells = object_cells(data.test.scenes.objects)
    return float(cells.mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="hidden", help="hidden, public, or TRAIN:TEST seeds (default hidden)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variant", action="append", default=[], help="a variant of tests/meta's reinforce part")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.data == "hidden":
        from autograder.grader.context import GradingContext

        ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-bandit-")))
        data, base = ctx.data, ctx.seed
    elif args.data == "public":
        data, base = load_data(), 0
    else:
        try:
            train_seed, test_seed = (int(x) for x in args.data.split(":"))
        except ValueError:
            parser.error(f"--data: expected hidden, public or TRAIN:TEST (two integers), got {args.data!r}")
        data, base = load_data(train_seed=train_seed, test_seed=test_seed), 0
    from tests.meta.variants import all_variants, make_submission

    known = {v.name: v for v in all_variants() if v.part == "reinforce"}
    unknown = [name for name in args.variant if name not in known]
    if unknown:
        parser.error(f"--variant: no reinforce variant of tests/meta is named {', '.join(unknown)}")
    runs = {"reference": load_module(ROOT / "solutions", "reinforce")}
    for name in args.variant:
        folder = make_submission(Path(tempfile.mkdtemp(prefix="captionkit-variant-")), known[name])
        runs[name] = load_module(folder, "reinforce")
    print(f"data {args.data}, {args.epochs} epochs, {args.threads} thread(s); chance {chance(data):.3f}\n")
    print("| training seed | " + " | ".join(runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    scores: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(args.first_seed, args.first_seed + args.seeds):
        row = []
        for name, module in runs.items():
            t0 = time.process_time()
            score = train_and_score(module, data, base + i, args.epochs)
            scores[name].append(score)
            row.append(f"{score:.3f} ({time.process_time() - t0:.1f} s)")
        print(f"| +{i} | " + " | ".join(row) + " |", flush=True)
    print("\n| run | min | mean | sd | max |\n|---|---|---|---|---|")
    for name, values in scores.items():
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        print(f"| {name} | {min(values):.3f} | {statistics.mean(values):.3f} | {sd:.3f} | {max(values):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
