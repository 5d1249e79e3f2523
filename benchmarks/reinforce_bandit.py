"""The look policy of Part 5's training check (shared.looking), calibrated: hard attention learns where to look from
the submission's REINFORCE, and nothing else can teach it (docs/thresholds.md).

    python benchmarks/reinforce_bandit.py [--data hidden | public | TRAIN:TEST] [--seeds 20] [--first-seed 0]
                                          [--variant NAME ...] [--threads 1]

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

import torch  # noqa: E402

from shared.encoder import GRID  # noqa: E402
from shared.looking import EPOCHS, look_score, look_weights, objects_of, train_look_policy  # noqa: E402
from solutions.attention import with_coords  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from reinforce_reversed import data_named  # noqa: E402


def load_module(folder: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"bandit_{name}_{abs(hash(str(folder)))}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train_and_score(student, data, seed: int) -> float:
    """The look policy trained on the training scenes with the student's estimator (shared.looking, as Part 5's
    training check trains it); its score on the test scenes."""
    train_features = with_coords(data.train.grids, GRID)
    test_features = with_coords(data.test.grids, GRID)
    policy = train_look_policy(student, train_features, objects_of(data.train.scenes.objects), seed)
    return look_score(look_weights(policy, test_features), objects_of(data.test.scenes.objects))


def chance(data) -> float:
    """The score of uniform weights: the mean share of the cells an object of a test scene covers."""
    return float(objects_of(data.test.scenes.objects)["cells"].float().mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="hidden", help="hidden, public, or TRAIN:TEST seeds (default hidden)")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variant", action="append", default=[], help="a variant of tests/meta's reinforce part")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data, base = data_named(args.data, parser)
    from tests.meta.variants import all_variants, make_submission

    known = {v.name: v for v in all_variants() if v.part == "reinforce"}
    unknown = [name for name in args.variant if name not in known]
    if unknown:
        parser.error(f"--variant: no reinforce variant of tests/meta is named {', '.join(unknown)}")
    runs = {"reference": load_module(ROOT / "solutions", "reinforce")}
    for name in args.variant:
        folder = make_submission(Path(tempfile.mkdtemp(prefix="captionkit-variant-")), known[name])
        runs[name] = load_module(folder, "reinforce")
    print(f"data {args.data}, {EPOCHS} epochs, {args.threads} thread(s); chance {chance(data):.3f}\n")
    print("| training seed | " + " | ".join(runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    scores: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(args.first_seed, args.first_seed + args.seeds):
        row = []
        for name, module in runs.items():
            t0 = time.process_time()
            score = train_and_score(module, data, base + i)
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
