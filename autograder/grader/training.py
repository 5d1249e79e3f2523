"""The training checks: one declarative spec per trained part (TrainingSpec), all in one registry (SPECS), and the
plumbing they share.

A training check trains the student's model on the hidden scenes with the part's recipe, in the worker, under a
time budget measured on the reference in the same grading run, and judges the captions it returns against the
hidden test references, which never leave the grading process. Everything about one part's training check is
its spec, read by every tool that needs it:

    the check itself              registered with the part's other checks (training_check); its budget is timed
                                  only for a run that needs it (run_within_budget)
    python -m autograder.grader.calibrate   the reference's score over training seeds (the threshold's spread)
    python -m autograder reference-curves   the reference's training curves the feedback reports draw
    python -m instructor reproduce          the lecture's budgets

What a student may know of the check (the recipe's epochs, batch size, learning rate and other inputs, the metric,
the threshold, the verdict) is published in the public zone, autograder/public/training.py (PUBLISHED), where
`check --train` trains on the public data with it; each spec reads it from there.

Adding a trained part: write its recipe (autograder/worker/recipes/<part>.py, `train_and_decode`), publish its
budget and threshold (autograder/public/training.py, PUBLISHED), add one TrainingSpec to SPECS below and one entry
to the rubric (docs/grader.md shows an example).
"""
from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn

from autograder.grader.context import GradingContext
from autograder.public.checks import check
from autograder.public.client import TimedOut
from autograder.public.compare import CheckFailed, expect
from autograder.public.limits import LIMITS
from autograder.public.training import (PUBLISHED, Bar, Published, RetrievalSet, curve, recall_at_1_of, reply,
                                        retrieval_inputs, split_index)
from autograder.public.training import reached as published_reached
from autograder.public.training import retrieval_set as retrieval_set_of
from shared.scenes import make_scenes
from shared.training import seed_everything, train
from shared.vocab import END, PAD, T_MAX, VOCAB, VOCAB_SIZE, decode_batch, encode_batch

@dataclass(frozen=True)
class TrainingSpec:
    """One part's training check, declared.

    The student's run: the worker's recipe `<part>.train_and_decode` trains with what is `published` of it (epochs,
    batch size, learning rate, its options: autograder/public/training.py) and the hidden seed, plus `options` (what
    the feedback report asks of it), and returns a dict: its captions of the hidden test grids under "tokens" (a
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
    check: str                   # the check's name, its key in the rubric
    description: str             # the property it tests: all a hidden check shows (formatted with the spec)
    published: Published         # its budget, threshold and verdict (autograder.public.training.PUBLISHED)
    train_reference: Callable[[GradingContext, int, int, object], nn.Module]
    reference_reply: Callable[[nn.Module, GradingContext], dict]
    prepare: Callable[[GradingContext], object] = lambda ctx: None
    options: dict = field(default_factory=dict)     # more inputs of the recipe: what the feedback report shows
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
        return ctx.budget(self.part, lambda prepared: self.train_reference(ctx, ctx.seed, 1, prepared),
                          scale=self.epochs, setup=lambda: self.prepare(ctx))

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
                    if self.failure({"tokens": tokens}, ctx) is None and \
                            evaluated(model, lambda: at_stop(model, epoch) or True) is None:
                        raise RuntimeError(f"the reference's reply at epoch {epoch} failed")
                return False   # trains on: the full run's score is calibrated too
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
    full: dict        # the reply after all epochs
    stopped: dict     # the reply at the epoch the check's run stops (the last if none passes before)
    epoch: int        # that epoch
    broken: dict      # (reply check, broken model's name) -> its reply at that epoch


SPECS: dict[str, TrainingSpec] = {}


def training_check(spec: TrainingSpec) -> TrainingSpec:
    """Register `spec` in SPECS and its check with the part's checks."""
    if spec.part in SPECS:
        raise ValueError(f"a training check of {spec.part} is registered twice")
    if spec.published.part != spec.part:
        raise ValueError(f"the training check of {spec.part} reads what is published of {spec.published.part}")
    SPECS[spec.part] = spec

    def run(student, ctx: GradingContext) -> None:
        ctx.keep_reply(spec.part, None)

        def train(seconds: float):
            return student.call(spec.recipe, timeout=seconds, evaluate=reached(spec, ctx), data=share_split(ctx),
                                epochs=spec.epochs, batch_size=spec.batch_size, lr=spec.lr, seed=ctx.seed,
                                **spec.published.options, **spec.options, **spec.inputs(ctx))
        try:
            out = run_within_budget(spec, student, ctx, train)
        except Exception as ended:
            ctx.keep_reply(spec.part, ended)   # the run ended without a reply: its reply checks fail as this one does
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
    if ctx.knows_budget(spec.part):   # timed for an earlier run of this grading run
        return train(spec.time_budget(ctx))
    try:
        return train(ctx.least_budget(spec.epochs))
    except TimedOut:
        pass
    budget = spec.time_budget(ctx)   # before the restart: the stopped run's worker is gone, the next not yet started
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

    `score(reply, ctx)` is the number the `published` threshold applies to (at least; autograder.public.training); it
    validates the reply and raises CheckFailed naming what is malformed. The published metric names it in words."""
    check: str
    description: str
    published: Bar
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


def reached(spec: TrainingSpec, ctx: GradingContext):
    """The grader's judgement of a training run after each epoch (autograder.public.client.Evaluate): the published
    one (autograder.public.training.reached) on the hidden test scenes. docs/thresholds.md says why a run stopped at
    the threshold means the same grade."""
    return published_reached(spec.published, ctx.data.test.scenes)


def share_split(ctx: GradingContext) -> str:
    """Path of a small file naming the hidden inputs for a worker (recipes read it with
    autograder.worker.recipes.load_split): the training tokens and targets, and the encoder's cached outputs
    (grids and predicted attributes of both splits), memory-mapped so the grader and the worker share
    their pages. Inputs only: the test references never leave the grading process."""
    return ctx.share("hidden-split", lambda: split_index(ctx.data.train, ctx.share_file(ctx.data.cache_file)))


# -- what a training check keeps for the feedback report (autograder/grader/report) ------------------------
# Only the student's own run, and only its first SHOWN hidden test scenes: docs/grader.md ("Feedback reports")
# says why that is shown and when. Keeping never raises and never changes a verdict: what is malformed is
# left out, and the report says the figure is missing.

SHOWN = 4            # hidden test scenes a report shows (the first ones of the test split)


def _captions(tokens, n: int) -> list[str] | None:
    """The first n captions of a (N >= n, T) long token tensor, or None."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] < n or tokens.dtype != torch.long:
        return None
    try:
        return decode_batch(tokens[:n])
    except ValueError:
        return None


def shown_scenes(ctx: GradingContext) -> dict:
    """The first SHOWN hidden test scenes: their reference captions and (N, 3, 32, 32) images. The data set
    keeps no pixels when its encoder outputs come from the cache; a scene is a pure function of the seed's
    random stream, so the first scenes of the same stream are drawn again (and compared)."""
    test = ctx.data.test.scenes
    n = min(SHOWN, len(test))
    references = [list(r) for r in test.references[:n]]
    images = test.images[:n].clone() if test.images is not None else None
    if images is None:
        again = make_scenes(n, test.seed, max_objects=max(len(o) for o in test.objects))
        images = again.images if again.references == references else None
    return {"references": references, "images": images}


def keep_run(ctx: GradingContext, part: str, curves: dict, captions: dict) -> None:
    """Keep the training curves ({name: per-epoch losses}) and the captions of the shown test scenes
    ({name: (N, T) tokens of the whole test split}) of the student's run, with those scenes."""
    try:
        scenes = shown_scenes(ctx)
        n = len(scenes["references"])
        kept_curves = {name: c for name, values in curves.items() if (c := curve(values)) is not None}
        kept_captions = {name: c for name, tokens in captions.items() if (c := _captions(tokens, n)) is not None}
    except Exception:  # noqa: BLE001 (the report is optional; the verdict is not)
        return
    if kept_curves:
        ctx.keep(part, "curves", kept_curves)
    if kept_captions:
        ctx.keep(part, "scenes", scenes)
        ctx.keep(part, "captions", kept_captions)


def keep_attention(ctx: GradingContext, part: str, attention, hard: bool = False) -> None:
    """Keep the attention maps a recipe returned for the shown scenes: {"weights": (n, T, L) float, "tokens":
    (n, T) long, the words emitted at each step}. hard: the decoder read one location (the argmax) per step."""
    if not isinstance(attention, dict):
        return
    weights, tokens = attention.get("weights"), attention.get("tokens")
    if not (isinstance(weights, torch.Tensor) and isinstance(tokens, torch.Tensor) and weights.dim() == 3
            and weights.is_floating_point() and tokens.dim() == 2 and tokens.dtype == torch.long
            and tuple(weights.shape[:2]) == tuple(tokens.shape) and 0 < weights.shape[0] <= SHOWN
            and weights.shape[1] <= 2 * T_MAX and weights.shape[2] <= 1024 and torch.isfinite(weights).all()):
        return
    words = []
    for row in tokens.tolist():
        if not all(0 <= t < VOCAB_SIZE for t in row):
            return
        step_words = []
        for t in row:
            step_words.append(VOCAB[t])
            if t in (END, PAD):
                break
        words.append(step_words)
    ctx.keep(part, "attention", {"weights": weights.detach().float().clone(), "words": words, "hard": hard})


def keep_beams(ctx: GradingContext, part: str, beams) -> None:
    """Keep the beams a recipe returned for the shown scenes: {"tokens": (n, k, T) long, "scores": (n, k)}."""
    if not isinstance(beams, dict):
        return
    tokens, scores = beams.get("tokens"), beams.get("scores")
    if not (isinstance(tokens, torch.Tensor) and isinstance(scores, torch.Tensor) and tokens.dim() == 3
            and tokens.dtype == torch.long and scores.dim() == 2 and tuple(scores.shape) == tuple(tokens.shape[:2])
            and 0 < tokens.shape[0] <= SHOWN and tokens.shape[1] <= 16 and scores.is_floating_point()):
        return
    try:
        captions = [decode_batch(beam) for beam in tokens]
    except ValueError:
        return
    ctx.keep(part, "beams", {"captions": captions, "scores": [[float(s) for s in row] for row in scores.tolist()]})


def keep(spec: TrainingSpec, out, ctx: GradingContext) -> None:
    """Keep what `spec` says the report shows of the student's run: its curves, its captions of the shown scenes
    (with those scenes) and its figures."""
    keep_run(ctx, spec.part, curves={name: reply(out, key) for name, key in spec.curves.items()},
             captions={name: _dig(out, keys) for name, keys in spec.captions.items()})
    for figure in spec.figures:
        FIGURES[figure](ctx, spec.part, out)


def _dig(out, keys: tuple[str, ...]):
    for key in keys:
        out = reply(out, key)
    return out


# The figures a training check can keep beyond curves and captions, by name: what the recipe returns for them.
FIGURES = {
    "beams": lambda ctx, part, out: keep_beams(ctx, part, reply(out, "beams")),
    "attention": lambda ctx, part, out: keep_attention(ctx, part, reply(out, "attention")),
    "hard attention": lambda ctx, part, out: keep_attention(ctx, part, reply(out, "attention"), hard=True),
}


# == the training checks ==========================================================================================
# Budgets and thresholds: autograder/public/training.py (PUBLISHED). docs/thresholds.md gives the reference's spread
# over twenty training seeds on the hidden data (one thread: `python -m autograder.grader.calibrate`) and what broken
# models reach; each threshold sits well below the reference's minimum and well above the broken models.

def _greedy_reply(model: nn.Module, state, max_len: int = T_MAX) -> dict:
    """What a recipe returns for a model decoded greedily by the reference decoder from `state`."""
    from solutions.decoding import greedy_decode

    with torch.no_grad():
        return {"tokens": greedy_decode(model, state, max_len)}

# -- Part 1: Show and Tell -------------------------------------------------------------------------------------

def _show_and_tell_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None,
                             watch: Callable[[nn.Module], Callable] | None = None) -> nn.Module:
    from solutions.show_and_tell import ShowTellRNN, caption_loss

    spec = SPECS["show_and_tell"]
    grids, tokens = ctx.data.train.grids, ctx.data.train.scenes.tokens
    seed_everything(seed)
    model = ShowTellRNN()
    model.history = train(model, lambda m, idx: caption_loss(m(grids[idx], tokens[idx]), tokens[idx]), len(tokens),
                          epochs, spec.batch_size, spec.lr, seed=seed, on_epoch=watch(model) if watch else None)
    return model


def _show_and_tell_reply(model: nn.Module, ctx: GradingContext) -> dict:
    """What train_and_decode returns for `model`: its greedy captions of the test grids and its retrieval scores."""
    from solutions.show_and_tell import retrieval_scores

    retrieval = retrieval_set(ctx)
    with torch.no_grad():
        scores = retrieval_scores(model, retrieval.features, retrieval.captions)
    return {**_greedy_reply(model, model.init_state(ctx.data.test.grids)), "retrieval": {"scores": scores}}


# -- Part 1's retrieval: the lecture's section 9, ranked by the student's retrieval_scores with the trained model ---

def retrieval_set(ctx: GradingContext) -> RetrievalSet:
    """The retrieval set of this grading run: the distinct scenes of ctx.retrieval_split (the hidden retrieval split),
    captions in an order drawn from a seed derived from the test secret (the same in every run: a submission's grade
    does not move with it); autograder.public.training.retrieval_set."""
    digest = hashlib.sha256(f"{ctx.test_secret:x}:retrieval order".encode()).digest()
    return retrieval_set_of(ctx.retrieval_split, int.from_bytes(digest[:7], "big"))


def retrieval_file(ctx: GradingContext) -> dict:
    """The recipe's inputs of the retrieval reply check: a file of the retrieval set's features and captions (in the
    order sent), and how long the student's retrieval_scores may run the trained model (LIMITS.retrieval); the order
    stays in the grading process."""
    def make():
        retrieval = retrieval_set(ctx)
        return {"features": retrieval.features, "captions": retrieval.captions}
    return retrieval_inputs(ctx.share("retrieval", make))


def trained_recall_at_1(out, ctx: GradingContext) -> float:
    """Caption-to-image recall@1 of the retrieval scores a run returned, in this grading run's caption order
    (autograder.public.training.recall_at_1_of). Raises CheckFailed naming what is malformed."""
    return recall_at_1_of(out, retrieval_set(ctx).order)


def _broken_retrieval(make_scores: Callable[[nn.Module, RetrievalSet], torch.Tensor]):
    """A broken model's reply for calibrate: the scores make_scores(model, retrieval set) returns."""
    def reply_of(model: nn.Module, ctx: GradingContext) -> dict:
        with torch.no_grad():
            return {"retrieval": {"scores": make_scores(model, retrieval_set(ctx))}}
    return reply_of


def _reference_scores(model, retrieval, features=None):
    from solutions.show_and_tell import retrieval_scores

    return retrieval_scores(model, retrieval.features if features is None else features, retrieval.captions)


training_check(TrainingSpec(
    part="show_and_tell", check="trained_show_and_tell_reaches_the_threshold",
    description="Trained for {spec.epochs} epochs on hidden scenes, the captioner reaches the exact-match threshold "
                "in time.",
    published=PUBLISHED["show_and_tell"],
    train_reference=_show_and_tell_reference,
    reference_reply=_show_and_tell_reply,
    options={"shown": SHOWN, "beam_width": 3},   # the beams of the trained model a feedback report shows
    inputs=retrieval_file,
    figures=("beams",),
    reply_checks=(ReplyCheck(
        check="trained_show_and_tell_retrieves_the_right_image",
        description="With the model the training check trained, your retrieval_scores ranks each hidden caption's "
                    "own image first often enough (recall@1 at least {extra.threshold}).",
        published=PUBLISHED["show_and_tell"].retrieval,
        score=trained_recall_at_1,
        broken={"scores transposed": _broken_retrieval(lambda m, r: _reference_scores(m, r).T),
                "image features zeroed": _broken_retrieval(
                    lambda m, r: _reference_scores(m, r, torch.zeros_like(r.features))),
                "image features of another scene": _broken_retrieval(
                    lambda m, r: _reference_scores(m, r, r.features.roll(1, 0))),
                "a diagonal (no model)": _broken_retrieval(lambda m, r: torch.eye(len(r.order)))}),)))


# -- Part 4: soft attention --------------------------------------------------------------------------------------

ATTENTION_GRID = PUBLISHED["attention"].options["grid"]   # coordinate channels for the 8 x 8 annotation grid


def _attention_inputs(ctx: GradingContext) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden training grids with coordinates, and their captions."""
    from solutions.attention import with_coords

    return with_coords(ctx.data.train.grids, ATTENTION_GRID), ctx.data.train.scenes.tokens


def _attention_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.attention import AttnCaptioner
    from solutions.show_and_tell import caption_loss

    spec = SPECS["attention"]
    grids, tokens = prepared if prepared is not None else _attention_inputs(ctx)
    seed_everything(seed)
    model = AttnCaptioner()
    model.history = train(model, lambda m, idx: caption_loss(m(grids[idx], tokens[idx])[0], tokens[idx]), len(tokens),
                          epochs, spec.batch_size, spec.lr, seed=seed)
    return model


def _attention_reply(model: nn.Module, ctx: GradingContext) -> dict:
    from solutions.attention import with_coords

    return _greedy_reply(model, model.init_state(with_coords(ctx.data.test.grids, ATTENTION_GRID)))


training_check(TrainingSpec(
    part="attention", check="trained_soft_attention_reaches_the_threshold",
    description="Trained {spec.epochs} epochs on hidden scenes with coordinates, the captioner reaches the exact-match "
                "threshold in time.",
    published=PUBLISHED["attention"],
    train_reference=_attention_reference, prepare=_attention_inputs, reference_reply=_attention_reply,
    options={"shown": SHOWN},
    figures=("attention",)))


# -- Part 5: hard attention (REINFORCE) ----------------------------------------------------------------------------

def _reinforce_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.attention import AttnCaptioner, with_coords
    from solutions.reinforce import HardAttentionLoss
    from shared.encoder import GRID

    spec = SPECS["reinforce"]
    features, tokens = with_coords(ctx.data.train.grids, GRID), ctx.data.train.scenes.tokens
    seed_everything(seed)
    model = AttnCaptioner()
    model.history = train(model, HardAttentionLoss(features, tokens, seed=seed), len(tokens), epochs,
                          spec.batch_size, lr=spec.lr, seed=seed)
    return model


def _reinforce_reply(model: nn.Module, ctx: GradingContext) -> dict:
    from solutions.attention import with_coords
    from solutions.reinforce import HardAttentionDecoder
    from shared.encoder import GRID

    decoder = HardAttentionDecoder(model)
    return _greedy_reply(decoder, decoder.init_state(with_coords(ctx.data.test.grids, GRID)))


training_check(TrainingSpec(
    part="reinforce", check="trained_hard_attention_reaches_the_threshold",
    description="Hard attention trained by REINFORCE for {spec.epochs} epochs on hidden scenes reaches the exact-match "
                "threshold in time.",
    published=PUBLISHED["reinforce"],
    train_reference=_reinforce_reference, reference_reply=_reinforce_reply,
    options={"shown": SHOWN},
    figures=("hard attention",)))


# -- Part 6: LSTM-A ------------------------------------------------------------------------------------------------

def _lstm_a_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.lstm_a import train_lstm_a
    from solutions.show_and_tell import caption_loss

    spec = SPECS["lstm_a"]
    data = ctx.data.train
    model, history = train_lstm_a(spec.published.options["variant"], data.grids, data.predicted_attributes,
                                  data.scenes.tokens, caption_loss, epochs=epochs, batch_size=spec.batch_size, lr=spec.lr, seed=seed)
    model.history = history
    return model


training_check(TrainingSpec(
    part="lstm_a", check="trained_a4_reaches_the_threshold",
    description="Trained {spec.epochs} epochs on hidden scenes with predicted attributes, LSTM-A4 reaches the "
                "exact-match threshold in time.",
    published=PUBLISHED["lstm_a"],
    train_reference=_lstm_a_reference,
    reference_reply=lambda model, ctx: _greedy_reply(model, model.init_state(ctx.data.test.grids,
                                                                             ctx.data.test.predicted_attributes))))


# -- Part 7: StyleNet ----------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _styled_corpus() -> torch.Tensor:
    from solutions.stylenet import styled_corpus

    return styled_corpus()


def _factual_captions(ctx: GradingContext) -> torch.Tensor:
    """The hidden training targets encoded with length T_STYLE, as the lecture trains StyleNet (the styled corpus
    is built too: neither is timed)."""
    from solutions.stylenet import T_STYLE

    _styled_corpus()
    return encode_batch(ctx.data.train.scenes.targets, T_STYLE)


def _stylenet_reference(ctx: GradingContext, seed: int, epochs: int, prepared=None) -> nn.Module:
    from solutions.show_and_tell import caption_loss
    from solutions.stylenet import train_stylenet

    spec = SPECS["stylenet"]
    captions = prepared if prepared is not None else _factual_captions(ctx)
    model, history = train_stylenet(ctx.data.train.grids, captions, _styled_corpus(), caption_loss,
                                    epochs=epochs, lr=spec.lr, batch_size=spec.batch_size, seed=seed)
    model.history = history
    return model


def _stylenet_reply(model: nn.Module, ctx: GradingContext) -> dict:
    from solutions.decoding import greedy_decode
    from solutions.stylenet import T_STYLE

    tokens = {}
    with torch.no_grad():
        for style in ("factual", "romantic"):
            model.set_style(style)
            tokens[style] = greedy_decode(model, model.init_state(ctx.data.test.grids), T_STYLE)
    return {"tokens": tokens}


training_check(TrainingSpec(
    part="stylenet", check="trained_stylenet_switches_the_style_with_the_factor",
    description="Trained for {spec.epochs} alternating epochs on hidden scenes, swapping the factor switches the style "
                "and keeps the content, in time.",
    published=PUBLISHED["stylenet"],
    train_reference=_stylenet_reference, prepare=_factual_captions, reference_reply=_stylenet_reply,
    curves={"factual": "factual_losses", "styled": "styled_losses"},
    captions={"factual": ("tokens", "factual"), "romantic": ("tokens", "romantic")}))
