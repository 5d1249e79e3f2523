"""Part 6's training check: LSTM-A."""

from __future__ import annotations

from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.spec import SPECS, TrainingSpec, greedy_reply, training_check
from autograder.public.published_training import PUBLISHED

# -- Part 6: LSTM-A ------------------------------------------------------------------------------------------------


def _lstm_a_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.lstm_a import train_lstm_a
    from solutions.show_and_tell import caption_loss

    spec = SPECS["lstm_a"]
    data = ctx.data.train
    model, history = train_lstm_a(
        spec.published.options["variant"],
        data.grids,
        data.predicted_attributes,
        data.scenes.tokens,
        caption_loss,
        epochs=epochs,
        batch_size=spec.batch_size,
        lr=spec.lr,
        seed=seed,
    )
    model.history = history
    return model


training_check(
    TrainingSpec(
        part="lstm_a",
        check="trained_a4_reaches_the_threshold",
        description="Trained {spec.epochs} epochs on hidden scenes with predicted attributes, LSTM-A4 reaches the "
        "exact-match threshold in time.",
        published=PUBLISHED["lstm_a"],
        train_reference=_lstm_a_reference,
        reference_reply=lambda model, ctx: greedy_reply(
            model, model.init_state(ctx.data.test.grids, ctx.data.test.predicted_attributes)
        ),
    )
)
