"""Part 1 checks: the ReLU step against nn.RNNCell, the masked loss, the captioner against nn.RNN, and
a Show and Tell model trained on hidden data."""
from __future__ import annotations

import torch

from autograder.checks import check
from autograder.compare import expect
from autograder.context import GradingContext
from autograder.training_checks import exact_match_of, share_split
from shared.training import seed_everything, train
from solutions import show_and_tell as reference

EPOCHS, BATCH = 12, 32
# Exact match on the hidden test scenes after 12 epochs: well below the reference's spread over seeds
# (docs/thresholds.md), far above what a model that ignores the image reaches.
THRESHOLD = 0.40


def reference_run(ctx: GradingContext, seed: int, epochs: int = EPOCHS):
    """Train the reference on the hidden data (also used to time the budget and to calibrate THRESHOLD)."""
    data = ctx.data
    grids, tokens = data.train.grids, data.train.scenes.tokens
    seed_everything(seed)
    model = reference.ShowTellRNN()
    train(model, lambda m, idx: reference.caption_loss(m(grids[idx], tokens[idx]), tokens[idx]), len(tokens),
          epochs, BATCH, seed=seed)
    return model


@check(timeout=300)
def trained_show_and_tell_reaches_the_threshold(student, ctx):
    """Trained for 12 epochs on hidden scenes, the captioner reaches the exact-match threshold in time."""
    budget = ctx.budget("show_and_tell", lambda: reference_run(ctx, ctx.seed, epochs=1), scale=EPOCHS)
    out = student.call("show_and_tell.train_and_decode", timeout=budget, data=share_split(ctx),
                       epochs=EPOCHS, batch_size=BATCH, seed=ctx.seed)
    accuracy = exact_match_of(out, ctx)
    expect(accuracy >= THRESHOLD, f"exact match {accuracy:.3f} on the hidden test scenes; the threshold is {THRESHOLD}",
           safe=f"exact match {accuracy:.3f}, threshold {THRESHOLD}")


def calibrate(ctx: GradingContext, seed: int) -> float:
    """The reference's exact match with training seed `seed` (for docs/thresholds.md)."""
    from shared.metrics import exact_match
    from shared.vocab import T_MAX, decode_batch
    from solutions.decoding import greedy_decode
    model = reference_run(ctx, seed)
    with torch.no_grad():
        tokens = greedy_decode(model, model.init_state(ctx.data.test.grids), T_MAX)
    return exact_match(decode_batch(tokens), ctx.data.test.scenes.references)
