"""Hard attention trained twice, as is and with the REINFORCE signal reversed: the paired check docs/thresholds.md
measured and did not adopt.

    python benchmarks/reinforce_reversed.py [--data public | hidden | TRAIN:TEST] [--seeds 2] [--first-seed 0]
                                            [--epochs 12] [--lam 1.0] [--mix 0.0] [--not-blind]

The reference AttnCaptioner is trained with the reference HardAttentionLoss (Part 5's recipe in its measured setting:
no expected context, `lam` 1.0, a blind start: initial h and c zero), once as it is and once with the gradient of the
attention weights reversed (the weights reach the loss only through the sampled locations' log-probabilities when
`mix` is 0, so only the REINFORCE term's steps are reversed). The reversed run of a correct estimator is the run of
an estimator with the wrong sign; an estimator whose log-probabilities carry no gradient trains the same run twice.
Prints, per training seed, both runs' exact match on the test scenes after every epoch and the lead at the last.
`--data`: the public scenes (load_data's defaults), the hidden ones (the grader's seed.json), or TRAIN:TEST seeds of
another draw (its encoder is pretrained and cached on first use).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from autograder.worker.recipes.reinforce import _blind  # noqa: E402
from shared.encoder import GRID, load_data  # noqa: E402
from shared.metrics import exact_match  # noqa: E402
from shared.training import seed_everything, train  # noqa: E402
from shared.vocab import T_MAX, decode_batch  # noqa: E402
from solutions import attention, decoding, reinforce  # noqa: E402


class ReversedGradient(torch.autograd.Function):
    """The identity on the way forward; the gradient's sign reversed on the way back."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return -grad


def reverse_the_attention_signal(model) -> None:
    """Reverse the gradient of the attention weights model.attention_step returns."""
    attention_step = model.attention_step

    def reversed_step(state):
        context, weights = attention_step(state)
        return context, ReversedGradient.apply(weights)

    model.attention_step = reversed_step


def run(data, seed: int, epochs: int, lam: float, mix: float, blind: bool, reversed_signal: bool) -> list[float]:
    """Exact match on the test scenes after each epoch of one training run."""
    features = attention.with_coords(data.train.grids, GRID)
    tokens = data.train.scenes.tokens
    test_features = attention.with_coords(data.test.grids, GRID)
    seed_everything(seed)
    model = attention.AttnCaptioner()
    if blind:
        model.init_state = _blind(model.init_state)  # the recipe's blind start (--option blind_start=true)
    if reversed_signal:
        reverse_the_attention_signal(model)
    scores = []

    def on_epoch(epoch: int, n: int, loss: float) -> None:
        model.eval()
        with torch.no_grad():
            decoder = reinforce.HardAttentionDecoder(model)
            captions = decode_batch(decoding.greedy_decode(decoder, decoder.init_state(test_features), T_MAX))
        model.train()
        scores.append(exact_match(captions, data.test.scenes.references))

    train(
        model,
        reinforce.HardAttentionLoss(features, tokens, seed=seed, mix=mix, lam=lam),
        len(tokens),
        epochs,
        64,
        lr=3e-3,
        seed=seed,
        on_epoch=on_epoch,
    )
    return scores


def data_named(name: str, parser: argparse.ArgumentParser):
    """(data, the base of the training seeds) of `--data`: the hidden scenes (the grader's seed.json and its
    seed), the public ones (load_data's defaults), or TRAIN:TEST seeds of another draw (its encoder is pretrained and
    cached on first use)."""
    if name == "hidden":
        from autograder.grader.context import GradingContext

        ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-benchmark-")))
        return ctx.data, ctx.seed
    if name == "public":
        return load_data(), 0
    try:
        train_seed, test_seed = (int(x) for x in name.split(":"))
    except ValueError:
        parser.error(f"--data: expected public, hidden or TRAIN:TEST (two integers), got {name!r}")
    return load_data(train_seed=train_seed, test_seed=test_seed), 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="public", help="public, hidden, or TRAIN:TEST seeds (default public)")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--lam", type=float, default=1.0)
    parser.add_argument("--mix", type=float, default=0.0)
    parser.add_argument("--not-blind", action="store_true", help="the model's own initial state, from the image")
    args = parser.parse_args()
    torch.set_num_threads(1)
    data, base = data_named(args.data, parser)
    print(
        f"data {args.data}; lam {args.lam}, mix {args.mix}, {'own' if args.not_blind else 'blind'} start, "
        f"{args.epochs} epochs; exact match after each epoch\n"
    )
    print("| training seed | run | exact match after each epoch | last | CPU s |")
    print("|---|---|---|---|---|")
    for i in range(args.first_seed, args.first_seed + args.seeds):
        last = {}
        for reversed_signal in (False, True):
            t0 = time.process_time()
            scores = run(data, base + i, args.epochs, args.lam, args.mix, not args.not_blind, reversed_signal)
            name = "reversed" if reversed_signal else "as is"
            last[name] = scores[-1]
            print(
                f"| +{i} | {name} | {' '.join(f'{s:.3f}' for s in scores)} | {scores[-1]:.3f} | "
                f"{time.process_time() - t0:.0f} |",
                flush=True,
            )
        print(f"| +{i} | lead | | {last['as is'] - last['reversed']:.3f} | |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
