"""Part 5's training check: hard attention trained by REINFORCE."""

from __future__ import annotations

from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.keeping import SHOWN
from autograder.grader.training.spec import SPECS, TrainingSpec, greedy_reply, training_check
from autograder.public.published_training import PUBLISHED
from shared.training import seed_everything, train

# -- Part 5: hard attention (REINFORCE) ----------------------------------------------------------------------------


def _reinforce_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from shared.encoder import GRID
    from solutions.attention import AttnCaptioner, with_coords
    from solutions.reinforce import HardAttentionLoss

    spec = SPECS["reinforce"]
    features, tokens = with_coords(ctx.data.train.grids, GRID), ctx.data.train.scenes.tokens
    seed_everything(seed)
    model = AttnCaptioner()
    model.seed = seed  # the look policy's too (_reinforce_reply)
    model.history = train(
        model,
        HardAttentionLoss(features, tokens, seed=seed),
        len(tokens),
        epochs,
        spec.batch_size,
        lr=spec.lr,
        seed=seed,
    )
    return model


def _reinforce_reply(model: nn.Module, ctx: GradingContext) -> dict:
    """What train_and_decode returns for `model` with the reference's functions: its greedy captions of the test
    grids and the look policy's weights (trained with the model's training seed, as the recipe does)."""
    import solutions.reinforce
    from shared.encoder import GRID
    from shared.looking import look_weights, objects_of, train_look_policy
    from solutions.attention import with_coords

    test_features = with_coords(ctx.data.test.grids, GRID)
    decoder = solutions.reinforce.HardAttentionDecoder(model)
    features = with_coords(ctx.data.train.grids, GRID)
    policy = train_look_policy(solutions.reinforce, features, objects_of(ctx.data.train.scenes.objects), model.seed)
    return {**greedy_reply(decoder, decoder.init_state(test_features)), "look": look_weights(policy, test_features)}


training_check(
    TrainingSpec(
        part="reinforce",
        check="trained_hard_attention_reaches_the_threshold",
        description="Hard attention trained by REINFORCE for {spec.epochs} epochs on hidden scenes reaches the exact-match "
        "threshold in time, and a look policy trained by your REINFORCE alone looks at the object it is asked about.",
        published=PUBLISHED["reinforce"],
        train_reference=_reinforce_reference,
        reference_reply=_reinforce_reply,
        options={"shown": SHOWN},
        figures=("hard attention",),
    )
)
