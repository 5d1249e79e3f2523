"""What a student may know of each training check (PUBLISHED), declared here once and read by the grader: the
recipe's budget (epochs, batch size, learning rate and its other inputs), the metric, the threshold and the verdict,
and the judgement after each epoch that stops a run once it reaches the threshold (`reached`).

The grader trains each trained part (Parts 1, 4 to 7) on hidden scenes, after the deadline. The hidden data, the
reference's runs and the time budget measured on the reference stay with the grader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from autograder.public.checks.stylenet import T_STYLE
from autograder.public.compare import CheckFailed
from autograder.public.training_verdicts import (
    exact_match_of,
    expect_exact_match,
    expect_exact_match_and_the_look,
    expect_the_style_switch,
    look_of,
    style_scores_of,
    style_switch_of,
)
from shared.encoder import GRID
from shared.scenes import Scenes


@dataclass(frozen=True)
class MetricThreshold:
    """A number a trained model must reach: `metric` (in words) at least `threshold`."""

    metric: str
    threshold: float


@dataclass(frozen=True)
class Published:
    """What a student may know of one part's training check: the recipe `<part>.train_and_decode` trains with
    `epochs`, `batch_size`, `lr` and `options`; `score` (default: exact match) is the `metric` the `threshold`
    applies to, `verdict` (default: expect_exact_match) the whole verdict; `retrieval`, Part 1's: the trained model's
    retrieval by the student's retrieval_scores must reach it too. Thresholds: the kit's threshold notes (the reference's
    spread over twenty training seeds on the hidden data, and what broken models reach)."""

    part: str
    epochs: int
    batch_size: int
    lr: float
    threshold: float
    options: dict = field(default_factory=dict)
    metric: str = "exact match"
    score: Callable[[object, Scenes], float] = exact_match_of
    verdict: Callable[[Published, object, Scenes, str], None] = expect_exact_match
    retrieval: MetricThreshold | None = None
    also: Callable[[object, Scenes], str] | None = None  # the rest of the verdict beside the metric, in words
    # The verdict on the captions of each epoch, which stops a run that passes it (reached; default: `verdict`): a
    # verdict that also judges what the recipe computes after training (Part 5's look policy) names the captions' own.
    epoch_verdict: Callable[[Published, object, Scenes, str], None] | None = None

    @property
    def recipe(self) -> str:
        return f"{self.part}.train_and_decode"

    def judge(self, out, test: Scenes, where: str) -> None:
        """The verdict on a run's reply `out` judged on `test` (the `where` test scenes): raises CheckFailed when it
        fails."""
        self.verdict(self, out, test, where)

    def failure(self, out, test: Scenes, where: str) -> str | None:
        """Why the verdict fails the run's reply `out`, or None when it passes."""
        try:
            self.judge(out, test, where)
        except CheckFailed as exc:
            return str(exc)
        return None


PUBLISHED = {
    published.part: published
    for published in (
        # The reference over twenty seeds: 0.510 .. 0.660 (mean 0.580); zeroed grids 0.000, the image at every step 0.007.
        # Recall@1 where the run stops: the reference 0.497 .. 0.649 (mean 0.556, sd 0.038; after all 12 epochs 0.602 ..
        # 0.770); the best broken model, the scores transposed, 0.016 (chance on about 190 scenes: 0.005).
        Published(
            "show_and_tell",
            epochs=12,
            batch_size=32,
            lr=3e-3,
            threshold=0.40,
            retrieval=MetricThreshold("recall@1", 0.30),
        ),
        # The reference: 0.535 .. 0.795 (the lecture's 0.593 came from other data and thread counts); no coordinate
        # channels 0.333, uniform weights 0.212, weights detached from the graph 0.205.
        Published("attention", epochs=12, batch_size=64, lr=3e-3, threshold=0.45, options={"grid": GRID}),
        # The reference: 0.292 .. 0.627, mean 0.395 (the widest spread of the five, sd 0.090); trained and decoded on zero
        # grids 0.005. Estimator bugs do not show in the captions (without the REINFORCE term the model does better):
        # the look policy, trained by the student's REINFORCE alone, is the part of the verdict they fail
        # (training_verdicts.LOOK_THRESHOLD).
        Published(
            "reinforce",
            epochs=12,
            batch_size=64,
            lr=3e-3,
            threshold=0.20,
            verdict=expect_exact_match_and_the_look,
            epoch_verdict=expect_exact_match,
            also=look_of,
        ),
        # The reference A4: 0.560 .. 0.723 (mean 0.640); A4 and A5 swapped 0.305, the per-step image detached 0.233.
        Published("lstm_a", epochs=8, batch_size=64, lr=3e-3, threshold=0.45, options={"variant": "A4"}),
        # The lecture's 12 alternating epochs; the reference's factual content slots: 0.807 .. 0.894, a model trained
        # without the image 0.440.
        Published(
            "stylenet",
            epochs=12,
            batch_size=64,
            lr=3e-3,
            threshold=0.65,
            options={"max_len": T_STYLE},
            metric="factual content slots",
            verdict=expect_the_style_switch,
            score=lambda out, test: style_scores_of(out, test)["factual"]["content_slots"],
            also=style_switch_of,
        ),
    )
}


def reached(published: Published, test: Scenes) -> Callable[[int, int, object], bool]:
    """The judgement of a training run after each epoch (autograder.public.client.Evaluate): True (stop training)
    when the captions the epoch's model gives the test grids already pass the verdict. The run then ends there and
    returns those captions, which the verdict judges again; a run that never reaches the threshold trains for all
    its epochs. Only epochs of the published count are judged: a worker learns at most one bit per epoch."""

    def evaluate(epoch: int, epochs: int, tokens) -> bool:
        if epochs != published.epochs or not 1 <= epoch < epochs:  # the last epoch ends the run anyway
            return False
        try:
            (published.epoch_verdict or published.verdict)(published, {"tokens": tokens}, test, "")
        except CheckFailed:
            return False
        return True

    return evaluate
