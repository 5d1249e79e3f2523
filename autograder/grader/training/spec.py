"""A training check declared (TrainingSpec), registered (training_check, SPECS), run within its time budget
(run_within_budget), and the reply checks graded on the same run (ReplyCheck)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from autograder.grader.context import GradingContext
from autograder.grader.training.keeping import keep
from autograder.public.checks import check
from autograder.public.client import TimedOut
from autograder.public.compare import CheckFailed, expect
from autograder.public.limits import LIMITS
from autograder.public.published_training import MetricThreshold, Published
from autograder.public.published_training import reached as published_reached
from autograder.public.training import split_index
from shared.parts import BY_MODULE
from shared.vocab import T_MAX


@dataclass(frozen=True)
class TrainingSpec:
    """One part's training check, declared.

    The student's run: the worker's recipe `<part>.train_and_decode` trains with what is `published` of it (epochs,
    batch size, learning rate, its options: autograder/public/published_training.py) and the hidden seed, plus
    `options` (what the feedback report asks of it), and returns a dict: its captions of the hidden test grids under "tokens" (a
    tensor, or {name: tensor} for several) and its per-epoch losses under the keys of `curves`, beside any figure
    data of `figures`. The published verdict judges it on the hidden test scenes; its score is the number the
    published threshold applies to.

    The reference's run: `train_reference(ctx, seed, epochs, prepared)` trains the reference on the hidden data
    and returns the model with its training history attached (`model.history`); `prepare(ctx)` builds its inputs
    outside the clock when it is timed; `reference_reply(model, ctx)` is what the recipe would return for it.
    `train_reference` of a spec with `reply_checks` also takes `watch` (model -> shared.training.train's
    on_epoch), so that calibrate can score the reference's model where the check's run stops.
    """

    part: str
    check: str  # the check's name, its key in the rubric
    description: str  # the property it tests: all a hidden check shows (formatted with the spec)
    published: Published  # its budget, threshold and verdict (autograder.public.published_training.PUBLISHED)
    train_reference: Callable[[GradingContext, int, int, object], nn.Module]
    reference_reply: Callable[[nn.Module, GradingContext], dict]
    prepare: Callable[[GradingContext], object] = lambda ctx: None
    options: dict = field(default_factory=dict)  # more inputs of the recipe: what the feedback report shows
    # What the feedback report keeps: curves {name in the report: key of the reply and of the reference's
    # history}, captions {name: keys leading to a (N, T) tensor in the reply}, figures (of FIGURES).
    curves: dict = field(default_factory=lambda: {"loss": "losses"})
    captions: dict = field(default_factory=lambda: {"greedy": ("tokens",)})
    figures: tuple[str, ...] = ()
    # The check's limit: the part's by default (the student's run is also bounded by its time budget).
    timeout: float = field(default_factory=lambda: LIMITS.part)
    # More inputs of the recipe that depend on the grading run (files of its data): ctx -> {name: value}.
    inputs: Callable[[GradingContext], dict] = lambda ctx: {}
    # Checks graded on more of the same run's reply (ReplyCheck), after this one in the rubric: no second run.
    reply_checks: tuple = ()

    @property
    def recipe(self) -> str:
        return self.published.recipe

    @property
    def epochs(self) -> int:
        return self.published.epochs

    @property
    def batch_size(self) -> int:
        return self.published.batch_size

    @property
    def lr(self) -> float:
        return self.published.lr

    @property
    def threshold(self) -> float:
        return self.published.threshold

    @property
    def metric(self) -> str:
        return self.published.metric

    def score_of(self, out, ctx: GradingContext) -> float:
        """The published score (the number the threshold applies to) of a run's reply `out` on the hidden test
        scenes."""
        return self.published.score(out, ctx.data.test.scenes)

    def time_budget(self, ctx: GradingContext) -> float:
        """Seconds the student's run may take: one epoch of the reference timed in this run, scaled to `epochs`
        (GradingContext.budget; preparing the inputs is not timed)."""
        return ctx.budget(
            self.part,
            lambda prepared: self.train_reference(ctx, ctx.seed, 1, prepared),
            scale=self.epochs,
            setup=lambda: self.prepare(ctx),
        )

    def reference_model(self, ctx: GradingContext, seed: int) -> nn.Module:
        """The reference trained with the full budget and training seed `seed`."""
        return self.train_reference(ctx, seed, self.epochs, self.prepare(ctx))

    def calibrate(self, ctx: GradingContext, seed: int) -> tuple[float, str | None]:
        """The reference's score with training seed `seed` (the spread thresholds are chosen from), and why the
        check's verdict fails that run (None: it passes; a verdict may ask more than the score, as StyleNet's)."""
        reply = self.reference_reply(self.reference_model(ctx, seed), ctx)
        return self.score_of(reply, ctx), self.failure(reply, ctx)

    def calibrate_stopped(self, ctx: GradingContext, seed: int) -> StoppedRun:
        """The reference with training seed `seed` as the check's run goes (for a spec with reply checks): trained
        for all epochs, its reply also kept at the first epoch before the last whose captions pass the verdict,
        where the check's run stops and its reply checks score (`reached`), with the replies of each reply check's
        broken models at that epoch."""
        from autograder.worker.recipes import evaluated

        stopped: dict = {}

        def at_stop(model: nn.Module, epoch: int) -> None:
            replies = {"reply": self.reference_reply(model, ctx), "epoch": epoch}
            for extra in self.reply_checks:
                for name, make in extra.broken.items():
                    replies[(extra.check, name)] = make(model, ctx)
            stopped.update(replies)

        def watch(model: nn.Module):
            def on_epoch(epoch: int, epochs: int, loss: float) -> bool:
                if not stopped and 1 <= epoch < epochs:
                    tokens = evaluated(model, lambda: self.reference_reply(model, ctx)["tokens"])
                    if (
                        self.failure({"tokens": tokens}, ctx) is None
                        and evaluated(model, lambda: at_stop(model, epoch) or True) is None
                    ):
                        raise RuntimeError(f"the reference's reply at epoch {epoch} failed")
                return False  # trains on: the full run's score is calibrated too

            return on_epoch

        model = self.train_reference(ctx, seed, self.epochs, self.prepare(ctx), watch=watch)
        full = self.reference_reply(model, ctx)
        if not stopped:
            at_stop(model, self.epochs)
        broken = {key: value for key, value in stopped.items() if isinstance(key, tuple)}
        return StoppedRun(full, stopped["reply"], stopped["epoch"], broken)

    def judge_run(self, out, ctx: GradingContext) -> None:
        """The check's verdict on a run's reply `out`: the published verdict on the hidden test scenes; raises
        CheckFailed when it fails."""
        self.published.judge(out, ctx.data.test.scenes, "hidden")

    def failure(self, out, ctx: GradingContext) -> str | None:
        """Why the verdict fails the run's reply `out`, or None when it passes."""
        try:
            self.judge_run(out, ctx)
        except CheckFailed as exc:
            return str(exc)
        return None


@dataclass(frozen=True)
class StoppedRun:
    """The reference's run as calibrate measures a spec with reply checks (TrainingSpec.calibrate_stopped)."""

    full: dict  # the reply after all epochs
    stopped: dict  # the reply at the epoch the check's run stops (the last if none passes before)
    epoch: int  # that epoch
    broken: dict  # (reply check, broken model's name) -> its reply at that epoch


SPECS: dict[str, TrainingSpec] = {}  # in the parts' order, whichever module registers first


def training_check(spec: TrainingSpec) -> TrainingSpec:
    """Register `spec` in SPECS and its check with the part's checks."""
    if spec.part in SPECS:
        raise ValueError(f"a training check of {spec.part} is registered twice")
    if spec.published.part != spec.part:
        raise ValueError(f"the training check of {spec.part} reads what is published of {spec.published.part}")
    SPECS[spec.part] = spec
    for part in sorted(SPECS, key=lambda name: BY_MODULE[name].number):
        SPECS[part] = SPECS.pop(part)

    def run(student, ctx: GradingContext) -> None:
        ctx.keep_reply(spec.part, None)

        def train(seconds: float):
            return student.call(
                spec.recipe,
                timeout=seconds,
                evaluate=stops_at_threshold(spec, ctx),
                data=share_split(ctx),
                epochs=spec.epochs,
                batch_size=spec.batch_size,
                lr=spec.lr,
                seed=ctx.seed,
                **spec.published.options,
                **spec.options,
                **spec.inputs(ctx),
            )

        try:
            out = run_within_budget(spec, student, ctx, train)
        except Exception as ended:
            ctx.keep_reply(spec.part, ended)  # the run ended without a reply: its reply checks fail as this one does
            raise
        keep(spec, out, ctx)
        try:
            spec.judge_run(out, ctx)
        except CheckFailed:
            ctx.keep_reply(spec.part, TrainedRun(out, passed=False))
            raise
        ctx.keep_reply(spec.part, TrainedRun(out, passed=True))

    run.__name__ = run.__qualname__ = spec.check
    run.__doc__ = spec.description.format(spec=spec)
    check(timeout=spec.timeout, training=True, part=spec.part)(run)
    for extra in spec.reply_checks:
        register_reply_check(spec, extra)
    return spec


def run_within_budget(spec: TrainingSpec, student, ctx: GradingContext, train: Callable[[float], object]):
    """`train(seconds)`: the student's run, ended by the worker at `seconds`; its reply if it ends within the spec's
    time budget (spec.time_budget).

    Timing the reference costs an epoch of its training; most runs never come near their budget. So a run is first
    given ctx.least_budget, a lower bound of its budget on any machine (the budget with the reference's own training
    time at zero; 41 to 53 s here, where the reference's whole runs take 6 to 28 s and its early-stopped runs 4 to 11). A
    run that ends within it ends within its budget, and its reference is never timed. A run still going at that
    bound is stopped (its worker killed: no student process is alive while the reference is timed), the reference
    is timed, and the run starts again in a fresh worker with its full budget: it trains from the start, with the
    same seed, to the same result. What it costs: the first attempt's seconds, for a run that takes 1.9 (StyleNet)
    to 6.4 (LSTM-A) times as long as the reference's whole run or more (docs/grader.md, "A training check")."""
    if ctx.knows_budget(spec.part):  # timed for an earlier run of this grading run
        return train(spec.time_budget(ctx))
    try:
        return train(ctx.least_budget(spec.epochs))
    except TimedOut:
        pass
    budget = spec.time_budget(ctx)  # before the restart: the stopped run's worker is gone, the next not yet started
    student.restart()
    return train(budget)


@dataclass(frozen=True)
class TrainedRun:
    """What a training check kept of its run for its reply checks: the recipe's reply and the training verdict."""

    reply: object
    passed: bool


@dataclass(frozen=True)
class ReplyCheck:
    """A check graded on more of a training check's run (one run per part per grade: training costs the most CPU of
    a grade). The recipe returns what it needs beside the captions (the spec's `inputs` send its inputs); the
    training check keeps the reply (GradingContext.keep_reply); this check, after it in the rubric, scores it.
    Points of its own: a bug in what it grades costs only these (the training check's verdict does not read it). It
    needs the trained model: a run that ended without a reply (a TODO, a crash, the time budget) fails it too, with
    the training check's reason, and a failure on a run whose training verdict failed says the model may be the
    cause.

    `score(reply, ctx)` is the number the `published` threshold applies to (at least;
    autograder.public.published_training); it validates the reply and raises CheckFailed naming what is malformed.
    The published metric names it in words."""

    check: str
    description: str
    published: MetricThreshold
    score: Callable[[object, GradingContext], float]
    # What broken student code returns with the reference's trained model, by name: (model, ctx) -> reply, scored by
    # calibrate beside the reference (the other side of the threshold).
    broken: dict = field(default_factory=dict)

    @property
    def metric(self) -> str:
        return self.published.metric

    @property
    def threshold(self) -> float:
        return self.published.threshold

    def judge(self, reply, ctx: GradingContext) -> float:
        """The score of `reply`; raises CheckFailed when it is below the threshold."""
        value = self.score(reply, ctx)
        summary = f"{self.metric} {value:.3f}, threshold {self.threshold}"
        expect(value >= self.threshold, f"{summary} on the hidden scenes", safe=summary)
        return value

    def judge_kept(self, kept, spec: TrainingSpec, ctx: GradingContext) -> None:
        """The check's verdict on what the training check kept: a TrainedRun; the exception its run ended with
        (raised again: this check fails as the training check did, a TODO named as one); None when it did not run."""
        if isinstance(kept, Exception):
            raise kept
        if not isinstance(kept, TrainedRun):
            text = f"no trained model to score: the run of {spec.check} ended without a reply"
            raise CheckFailed(text, safe=text)
        try:
            self.judge(kept.reply, ctx)
        except CheckFailed as exc:
            if kept.passed:
                raise
            cause = f"; the model did not pass {spec.check} either, which may be the cause"
            raise CheckFailed(f"{exc}{cause}", safe=f"{exc.safe}{cause}" if exc.safe else "") from None


def register_reply_check(spec: TrainingSpec, extra: ReplyCheck) -> None:
    """Register `extra`'s check with the part's checks: it reads the run its training check kept."""

    def run(student, ctx: GradingContext) -> None:
        extra.judge_kept(ctx.kept_reply(spec.part), spec, ctx)

    run.__name__ = run.__qualname__ = extra.check
    run.__doc__ = extra.description.format(spec=spec, extra=extra)
    check(training=True, part=spec.part)(run)


def stops_at_threshold(spec: TrainingSpec, ctx: GradingContext):
    """The grader's judgement of a training run after each epoch (autograder.public.client.Evaluate): the published
    one (autograder.public.published_training.reached) on the hidden test scenes. docs/thresholds.md says why a run
    stopped at the threshold means the same grade."""
    return published_reached(spec.published, ctx.data.test.scenes)


def share_split(ctx: GradingContext) -> str:
    """Path of a small file naming the hidden inputs for a worker (recipes read it with
    autograder.worker.recipes.load_split): the training tokens and targets, and the encoder's cached outputs
    (grids and predicted attributes of both splits), memory-mapped so the grader and the worker share
    their pages. Inputs only: the test references never leave the grading process."""
    return ctx.share("hidden-split", lambda: split_index(ctx.data.train, ctx.share_file(ctx.data.cache_file)))


# Budgets and thresholds: autograder/public/published_training.py (PUBLISHED). docs/thresholds.md gives the
# reference's spread over twenty training seeds on the hidden data (one thread: `python -m autograder.grader.calibrate`)
# and what broken models reach; each threshold sits well below the reference's minimum and well above the broken models.


def greedy_reply(model: nn.Module, state, max_len: int = T_MAX) -> dict:
    """What a recipe returns for a model decoded greedily by the reference decoder from `state`."""
    from solutions.decoding import greedy_decode

    with torch.no_grad():
        return {"tokens": greedy_decode(model, state, max_len)}
