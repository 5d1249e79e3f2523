"""Training on the public data: what a student may know of each training check, and `check --train`.

The grader trains each trained part (Parts 1, 4 to 7) on hidden scenes, after the deadline. What a
student may know of that check is declared here, once, and the grader reads it (PUBLISHED): the recipe's budget
(epochs, batch size, learning rate and its other inputs), the metric, the threshold and the verdict. The hidden data,
the reference's runs and the time budget measured on the reference stay with the grader.

`check --train` trains each trained part as its training check does, with the worker's recipe
(`<part>.train_and_decode`, autograder/worker/recipes) and the published budget, on the public scenes (training
scenes of seed 0, test scenes of seed 1: shared.encoder.load_data's defaults), stops where the run reaches the
threshold as the grader stops it, and prints its score next to the threshold, the epoch it stopped at, and the lab's
two image controls beside what a model that reads the image reaches there (CONTROLS_EXPECTED; train_parts, table). A recipe trains and decodes with other parts' code (OTHER_PARTS: Part 1's loss, Part 2's
decoder, Part 4's model), which the part's worker holds beside the student's module (client.Worker's
`references`): the kit's `python -m autograder check --train` sends the reference versions and runs within the
grader's time budget; the student handout's `python -m autograder.public check --train` sends the student's own
modules and runs within a fixed limit (limits.TimeLimits.training), having no reference to time.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autograder.public import limits
from autograder.public.checks.stylenet import T_STYLE
from autograder.public.client import StudentError, StudentWorker, WorkerDied
from autograder.public.client.replies import KINDS
from autograder.public.compare import CheckFailed, expect, type_name
from autograder.public.progress import Progress
from autograder.public.runner import raised_at
from autograder.public.staging import StagingError
from autograder.worker.protocol import clean
from shared.encoder import GRID, CaptionData, Split
from shared.metrics import exact_match, style_scores
from shared.parts import BY_MODULE, TODO_MESSAGE
from shared.scenes import Scenes
from shared.vocab import decode_batch

# The other parts whose modules a part's recipes train or decode with (autograder.worker.recipes.reference), each
# graded before it: the grader's workers hold their reference versions (autograder.grader.engine.REFERENCES), the
# handout's `check --train` the student's own.
OTHER_PARTS = {
    "bleu": (),
    "decoding": (),
    "show_and_tell": ("decoding",),
    "attention": ("decoding", "show_and_tell"),
    "reinforce": ("decoding", "attention"),
    "lstm_a": ("decoding", "show_and_tell"),
    "stylenet": ("decoding", "show_and_tell"),
}


# -- reading a recipe's reply ----------------------------------------------------------------------------------------

MAX_EPOCHS = 100  # longer "curves" are not a training run's


def reply(out, key: str):
    """out[key] when a recipe returned a dict holding it, else None."""
    return out.get(key) if isinstance(out, dict) else None


def curve(values) -> list[float] | None:
    """A training curve (per-epoch losses) as floats, or None when `values` is not one."""
    if not isinstance(values, (list, tuple)) or not 0 < len(values) <= MAX_EPOCHS:
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return None
    return [float(v) for v in values]


def predicted_tokens(out, n: int, key: str = "tokens") -> torch.Tensor:
    """The (n, T) long token tensor a training recipe returned under `key`."""
    tokens = out.get(key) if isinstance(out, dict) else None
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[0] != n or tokens.dtype != torch.long:
        raise CheckFailed(
            f"the trained model's captions: expected a long tensor of shape ({n}, T), got "
            f"{tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type_name(tokens)}"
        )
    return tokens


# -- the verdicts --------------------------------------------------------------------------------------------------
# Each takes the reply and the test scenes it is judged on (the grader's: hidden; check --train's: public) and names
# them by `where` ("hidden", "public").


def exact_match_of(out, test: Scenes, key: str = "tokens") -> float:
    """Exact match of the returned captions against the test scenes' references."""
    try:
        captions = decode_batch(predicted_tokens(out, len(test), key))
    except ValueError as exc:  # a token id outside the vocabulary
        raise CheckFailed(f"the trained model's captions: {exc}") from None
    return exact_match(captions, test.references)


LOSS_FELL = 0.98  # a run whose last epoch's loss is above this fraction of its first's did not learn


def known_causes(out, figures: bool = True) -> list[str]:
    """What a failed training run says about its own cause, in words that name the symptom and reveal nothing of
    the test scenes: the student's step-by-step decoding disagreeing with the student's forward (the recipe
    compares them on training captions; the captions judged come from step, training used forward), a training
    loss that did not fall. Only read to explain a failure: it never changes a verdict. figures=False: no number
    the worker sent (the losses), for text a hidden check shows: the module can set those numbers to anything, so
    printed whole they would carry what its worker holds (security notes, A57)."""
    causes = []
    if reply(out, "step_agrees_with_forward") is False:
        causes.append(
            "your step-by-step decoding (init_state, then step) disagrees with your forward on the trained "
            "model: training follows forward, the captions judged come from step"
        )
    losses = curve(reply(out, "losses"))
    if losses and len(losses) > 1 and losses[-1] > LOSS_FELL * losses[0]:
        shown = f" (first epoch {losses[0]:.3f}, last {losses[-1]:.3f})" if figures else ""
        causes.append(f"the training loss did not fall{shown}: no learning signal reaches the parameters")
    return causes


def expect_exact_match(published: Published, out, test: Scenes, where: str) -> None:
    """The verdict of the exact-match training checks: the returned greedy captions reach the threshold on the test
    scenes."""
    accuracy = exact_match_of(out, test)
    threshold = published.threshold
    causes = "".join(f"; {cause}" for cause in known_causes(out))
    unshaped = "".join(f"; {cause}" for cause in known_causes(out, figures=False))
    expect(
        accuracy >= threshold,
        f"exact match {accuracy:.3f} on the {where} test scenes; the threshold is {threshold}{causes}",
        safe=f"exact match {accuracy:.3f}, threshold {threshold}{unshaped}",
    )


# StyleNet: the threshold is the factual content-slot accuracy; the swap of the factor must also switch the style.
ROMANTIC_STYLE_RATE = 0.90  # at least (the reference: 0.995 .. 1.000)
FACTUAL_STYLE_RATE = 0.10  # at most (the reference: 0.000)


def style_scores_of(out, test: Scenes) -> dict[str, dict]:
    """shared.metrics.style_scores of the captions under each factor ({style: (N, T) tokens} under "tokens")."""
    scores = {}
    for style in ("factual", "romantic"):
        try:
            captions = decode_batch(predicted_tokens(reply(out, "tokens"), len(test), style))
        except ValueError as exc:  # a token id outside the vocabulary
            raise CheckFailed(f"the trained model's {style} captions: {exc}") from None
        scores[style] = style_scores(captions, test.references)
    return scores


def style_switch_of(out, test: Scenes) -> str:
    """The style rates of StyleNet's verdict beside what it needs, in words (check --train shows them with the
    score)."""
    scores = style_scores_of(out, test)
    return (
        f"style switch: romantic captions' style rate {scores['romantic']['style_rate']:.3f} (needs >= "
        f"{ROMANTIC_STYLE_RATE}), factual captions' {scores['factual']['style_rate']:.3f} (needs <= "
        f"{FACTUAL_STYLE_RATE})"
    )


def expect_the_style_switch(published: Published, out, test: Scenes, where: str) -> None:
    """Swapping the factor switches the style (style rates) and the factual captions keep the content (slots)."""
    if not isinstance(out, dict):
        raise CheckFailed(f"the trained model's captions: unexpected reply {type_name(out)}")
    scores = style_scores_of(out, test)
    romantic, factual = scores["romantic"]["style_rate"], scores["factual"]["style_rate"]
    content = scores["factual"]["content_slots"]
    summary = (
        f"style rate {romantic:.3f} romantic (needs >= {ROMANTIC_STYLE_RATE}), {factual:.3f} factual "
        f"(needs <= {FACTUAL_STYLE_RATE}); factual content slots {content:.3f} (needs >= {published.threshold})"
    )
    ok = romantic >= ROMANTIC_STYLE_RATE and factual <= FACTUAL_STYLE_RATE and content >= published.threshold
    expect(ok, f"on the {where} test scenes: {summary}", safe=summary)


# -- Part 1's trained retrieval: recall@1 of the student's retrieval_scores with the trained model ----------------


@dataclass(frozen=True)
class RetrievalSet:
    """The retrieval scenes as the worker gets them: the images in scene order, the captions in an order only the
    judge knows, so a scorer returning a diagonal (or anything but the model's scores) ranks as chance."""

    features: torch.Tensor  # (N, L, D) float: the grids of N scenes whose captions are told apart (distinct_scenes)
    captions: torch.Tensor  # (N, T) long: sent caption c is the target caption of scene order[c]
    order: torch.Tensor  # (N,) long: a permutation of 0 .. N-1


def distinct_scenes(targets: list[str], references: list[list[str]]) -> list[int]:
    """The scenes kept, in order: scene k unless its target caption is a reference of a scene kept before it or one
    of its references is such a scene's target. Between kept scenes the right image of a caption is then the only
    one it describes (the split draws many scenes per caption: the lecture counted 30 of one caption in 6000)."""
    kept, kept_targets, kept_references = [], set(), set()
    for k, (target, refs) in enumerate(zip(targets, references)):
        if target in kept_references or kept_targets.intersection(refs):
            continue
        kept.append(k)
        kept_targets.add(target)
        kept_references.update(refs)
    return kept


def retrieval_set(split: Split, seed: int) -> RetrievalSet:
    """The distinct scenes of `split`, their captions in an order drawn from `seed`."""
    kept = torch.tensor(distinct_scenes(list(split.scenes.targets), [list(r) for r in split.scenes.references]))
    order = torch.randperm(len(kept), generator=torch.Generator().manual_seed(seed))
    captions = split.scenes.tokens[kept]
    return RetrievalSet(split.grids[kept].float().clone(), captions[order].clone(), order)


def retrieval_inputs(path: str) -> dict:
    """The recipe's inputs of the trained retrieval: the file of the retrieval set's features and captions (in the
    order sent: {"features", "captions"}), and how long the student's retrieval_scores may run the trained model
    (LIMITS.retrieval)."""
    return {"retrieval": path, "retrieval_seconds": limits.LIMITS.retrieval}


def recall_at_1_of(out, order: torch.Tensor) -> float:
    """Caption-to-image recall@1 of the retrieval scores a run returned (an (N, N) float matrix, rows the images in
    scene order, columns the captions in the order sent), once the columns are put back in scene order (`order`);
    ties count against the true image. Raises CheckFailed naming what is malformed; what the student's code raised
    is in its message, and only that it raised in its `safe` text."""
    got = reply(out, "retrieval")
    if isinstance(got, dict) and "raised" in got:
        kind, message = got.get("raised"), got.get("message")
        if not isinstance(kind, str) or not isinstance(message, str):
            raise CheckFailed("retrieval_scores on the trained model: unexpected reply")
        # The kind and the message are the student's code's choice while it held the retrieval split: a hidden check
        # shows neither (A58).
        kind = kind if kind in KINDS else "Exception"
        raise CheckFailed(
            f"retrieval_scores on the trained model raised {kind}: {clean(message, 300)}",
            safe="retrieval_scores on the trained model raised an exception",
        )
    scores = reply(got, "scores")
    n = len(order)
    if not (isinstance(scores, torch.Tensor) and scores.dim() == 2 and scores.is_floating_point()):
        got_text = (
            f"{scores.dtype} of shape {tuple(scores.shape)}" if isinstance(scores, torch.Tensor) else type_name(scores)
        )
        text = f"retrieval_scores on the trained model: expected a floating (images, captions) tensor, got {got_text}"
        raise CheckFailed(text, safe=text)
    if tuple(scores.shape) != (n, n):
        text = "retrieval_scores on the trained model: expected one row per image and one column per caption"
        raise CheckFailed(f"{text} ({n}, {n}), got {tuple(scores.shape)}", safe=text)
    if not bool(torch.isfinite(scores).all()):
        text = "retrieval_scores on the trained model returned values that are not finite"
        raise CheckFailed(text, safe=text)
    in_scene_order = scores.detach().double()[:, torch.argsort(order)]
    # recall@1 only: a caption's true image must score strictly above every other image of its column
    best_other = in_scene_order.masked_fill(torch.eye(n, dtype=torch.bool), float("-inf")).max(0).values
    return (in_scene_order.diagonal() > best_other).double().mean().item()


# -- what is published of each training check ---------------------------------------------------------------------


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
        # grids 0.005. Estimator bugs do not show here (without the REINFORCE term the model does better): the property
        # checks of the part catch them.
        Published("reinforce", epochs=12, batch_size=64, lr=3e-3, threshold=0.20),
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


# -- what the image controls show of a model that reads the image ------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What a trained model that reads the image reaches under one image control, in its part's metric: `words` as
    a student reads them ("near 0"), the range [low, high] the reference's run on the public data falls in, and why."""

    words: str
    low: float
    high: float
    why: str


NEAR_0_WITHOUT_THE_IMAGE = Expected("near 0", 0.0, 0.05, "every word of these captions depends on the image")
NEAR_0_WITH_ANOTHER_IMAGE = Expected("near 0", 0.0, 0.05, "the model captions the other scene")

# The reference's runs on the public data (`check --train`, training seed 0, zeroed then shuffled): Show and Tell
# 0.005, 0.010; soft attention 0.010, 0.007; REINFORCE 0.010, 0.007; LSTM-A A4 0.010, 0.010 (exact match); StyleNet
# 0.000, 0.436 (factual content slots). StyleNet's five slots take few values each: another scene's caption shares
# a slot's word with this one's by chance about 0.44 of the time, what a model trained without the image reaches on
# the hidden scenes (0.440); with zeroed features it gets no slot right.
CONTROLS_EXPECTED = {
    **{
        part: {"zeroed": NEAR_0_WITHOUT_THE_IMAGE, "shuffled": NEAR_0_WITH_ANOTHER_IMAGE}
        for part in ("show_and_tell", "attention", "reinforce", "lstm_a")
    },
    "stylenet": {
        "zeroed": Expected("near 0", 0.0, 0.05, "without an image it gets none of the scene's content words right"),
        "shuffled": Expected(
            "about 0.44",
            0.38,
            0.50,
            "the captions describe another scene, whose content words "
            "match this scene's by chance about as often as a model trained without the image "
            "guesses them",
        ),
    },
}


def reached(published: Published, test: Scenes) -> Callable[[int, int, object], bool]:
    """The judgement of a training run after each epoch (autograder.public.client.Evaluate): True (stop training)
    when the captions the epoch's model gives the test grids already pass the verdict. The run then ends there and
    returns those captions, which the verdict judges again; a run that never reaches the threshold trains for all
    its epochs. Only epochs of the published count are judged: a worker learns at most one bit per epoch."""

    def evaluate(epoch: int, epochs: int, tokens) -> bool:
        if epochs != published.epochs or not 1 <= epoch < epochs:  # the last epoch ends the run anyway
            return False
        return published.failure({"tokens": tokens}, test, "") is None

    return evaluate


def split_index(train: Split, encoder_file: str) -> dict:
    """The file a training recipe reads its inputs from (autograder.worker.recipes.load_split): the training tokens
    and targets of `train`, and the path of the encoder's outputs of both splits (shared.encoder.load_data's cache
    file), which the worker memory-maps. Inputs only: the test references stay with the judge."""
    return {"tokens": train.scenes.tokens, "targets": list(train.scenes.targets), "encoder_file": encoder_file}


# -- check --train ---------------------------------------------------------------------------------------------------

PUBLIC_SEED = 0  # the training seed of the runs: the public training scenes' (load_data's default)
RETRIEVAL_ORDER = 0  # the seed of the order the public retrieval set's captions are sent in
CONTROLS = ("zeroed", "shuffled")  # the lab's image controls (autograder.worker.recipes.image_controls)


@dataclass(frozen=True)
class PublicInputs:
    """What every run of `check --train` reads: the public data and the files its worker loads."""

    data: CaptionData
    split: str  # split_index's file
    retrieval: RetrievalSet  # the public test scenes' retrieval set
    retrieval_file: str


def public_inputs(folder: Path, data: CaptionData | None = None) -> PublicInputs:
    """The public data (shared.encoder.load_data's defaults, encoded with one thread as a grade encodes it, unless
    `data` is given) and its files for the workers, written in `folder`: readable by a worker of another user, and
    the folder not listable."""
    if data is None:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            from shared.encoder import load_data

            data = load_data(cache=True)
        finally:
            torch.set_num_threads(threads)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o711)

    def written(name: str, save: Callable[[Path], None]) -> str:
        path = folder / name
        save(path)
        os.chmod(path, 0o644)
        return str(path)

    encoder = written("encoder.pt", lambda path: shutil.copyfile(data.cache_file, path))
    split = written("split.pt", lambda path: torch.save(split_index(data.train, encoder), path))
    retrieval = retrieval_set(data.test, RETRIEVAL_ORDER)
    retrieval_file = written(
        "retrieval.pt", lambda path: torch.save({"features": retrieval.features, "captions": retrieval.captions}, path)
    )
    return PublicInputs(data, split, retrieval, retrieval_file)


@dataclass(frozen=True)
class PublicRun:
    """One part's run on the public data, judged: its score (None: nothing scorable), the image controls' scores,
    why its verdict failed or its run ended (None: it passed), and its trained retrieval's recall@1 (Part 1's) or
    why that could not be scored. `started`: False when no run started (the module could not be staged or imported,
    a module it uses is missing)."""

    part: str
    passed: bool
    score: float | None = None
    controls: dict = field(default_factory=dict)
    failure: str | None = None
    recall: float | None = None
    recall_failure: str | None = None
    started: bool = True
    epochs: EpochsTrained | None = None
    also: str | None = None  # the rest of the verdict (Published.also)


@dataclass
class EpochsTrained:
    """How far a run trained: the last epoch it reported (`last`) of its `of`, and the epoch whose captions reached
    the threshold and stopped it (`stopped_at`, None when it trained on)."""

    last: int = 0
    of: int = 0
    stopped_at: int | None = None

    def reported(self, epoch: int, epochs: int) -> None:
        if epoch <= self.last:  # the run started over (the kit's: stopped at its least budget, run with its full one)
            self.stopped_at = None
        self.last, self.of = epoch, epochs

    def judged(self, evaluate: Callable[[int, int, object], bool]) -> Callable[[int, int, object], bool]:
        """`evaluate` (reached), noting the epoch it stops the run at."""

        def judge(epoch: int, epochs: int, tokens) -> bool:
            stop = evaluate(epoch, epochs, tokens)
            if stop:
                self.stopped_at = epoch
            return stop

        return judge

    def watching(self, shown: Callable[[int, int, float], None] | None) -> Callable[[int, int, float], None]:
        """A worker's on_progress that notes each epoch, then shows it as `shown` (if any) does."""

        def on_progress(epoch: int, epochs: int, loss: float) -> None:
            self.reported(epoch, epochs)
            if shown is not None:
                shown(epoch, epochs, loss)

        return on_progress

    def __str__(self) -> str:
        if self.stopped_at is not None:
            return (
                f"training stopped early, after epoch {self.stopped_at} of {self.of}: its captions reached the "
                f"threshold there, and the grader stops its runs the same way (the score is that epoch's model's; "
                f"more epochs usually raise it)"
            )
        return f"trained all {self.of} epochs" if self.last == self.of else f"trained {self.last} of {self.of} epochs"


def _scored(score: Callable[[object, Scenes], float], out, test: Scenes) -> float | None:
    """score(out, test) as a float, or None when the reply holds nothing scorable (CheckFailed)."""
    try:
        return float(score(out, test))
    except CheckFailed:
        return None


def ended(exc: StudentError | WorkerDied) -> str:
    """Why a run ended without a reply, in full (the public data: nothing is hidden): an unwritten TODO as one line,
    the student's exception with the lines of their file it came from, the worker's end."""
    if isinstance(exc, WorkerDied):
        return str(exc)
    at = raised_at(exc.where)
    todo = TODO_MESSAGE.search(exc.detail)
    if exc.kind == "NotImplementedError" and todo:
        return f"your code raised NotImplementedError: {todo.group(0)}" + (f" (at {at})" if at else "")
    return f"your code raised {exc.kind}: {exc.detail}" + (f"\n{exc.where.rstrip()}" if exc.where else "")


# within(part, worker, train): the run's reply, where train(seconds) is the run in `worker`, ended at `seconds`
# (client.TimedOut): the kit's runs get the grader's time budget (autograder.grader.training.run_within_budget), the
# handout's a fixed limit.
Within = Callable[[str, StudentWorker, Callable[[float], object]], object]


def train_part(worker: StudentWorker, published: Published, inputs: PublicInputs, within: Within) -> PublicRun:
    """Train `published.part` on the public data in `worker` (serving with the other parts' modules: serve_hidden),
    as its training check does, with the image controls; judge the run."""
    test = inputs.data.test.scenes
    more = retrieval_inputs(inputs.retrieval_file) if published.retrieval else {}
    epochs = EpochsTrained()
    worker.on_progress = epochs.watching(worker.on_progress)

    def train_for(seconds: float):
        return worker.call(
            published.recipe,
            timeout=seconds,
            evaluate=epochs.judged(reached(published, test)),
            data=inputs.split,
            epochs=published.epochs,
            batch_size=published.batch_size,
            lr=published.lr,
            seed=PUBLIC_SEED,
            **published.options,
            **more,
            controls=True,
        )

    try:
        out = within(published.part, worker, train_for)
    except (StudentError, WorkerDied) as exc:
        return PublicRun(published.part, False, failure=ended(exc), epochs=epochs if epochs.last else None)
    controls = reply(out, "controls")
    scores = {
        name: _scored(published.score, {"tokens": controls.get(name)}, test) if isinstance(controls, dict) else None
        for name in CONTROLS
    }
    failure = published.failure(out, test, "public")
    recall = recall_failure = None
    if published.retrieval:
        try:
            recall = recall_at_1_of(out, inputs.retrieval.order)
        except CheckFailed as exc:
            recall_failure = str(exc)
    passed = failure is None and (
        not published.retrieval or (recall is not None and recall >= published.retrieval.threshold)
    )
    also = None
    if published.also is not None and failure is None:  # a failure's text already says it
        also = published.also(out, test)
    return PublicRun(
        published.part,
        passed,
        _scored(published.score, out, test),
        scores,
        failure,
        recall,
        recall_failure,
        epochs=epochs if epochs.last else None,
        also=also,
    )


def train_parts(
    parts: tuple[str, ...],
    start: Callable[[str], StudentWorker],
    within: Within,
    inputs: PublicInputs,
    progress: Progress | None = None,
) -> list[PublicRun]:
    """Train each of `parts` on the public data: `start(part)` starts its worker (given the modules of OTHER_PARTS
    as its references), `within` bounds its run."""
    progress = progress or Progress()
    runs = []
    progress.begin(len(parts), unit="training run")
    try:
        for i, part in enumerate(parts):
            progress.part(i + 1, len(parts), part, 1)
            try:
                worker = start(part)
            except StagingError as exc:
                runs.append(PublicRun(part, False, failure=str(exc), started=False))
                progress.run_done(run_outcome(runs[-1]))
                continue
            worker.on_progress = progress.epoch
            try:
                if worker.import_error is not None:
                    error = worker.import_error
                    where = f"\n{error.where.rstrip()}" if error.where else ""
                    run = PublicRun(
                        part,
                        False,
                        failure=f"{part}.py could not be imported: {error.kind}: {error.detail}{where}",
                        started=False,
                    )
                elif not worker.alive:
                    run = PublicRun(
                        part, False, failure=worker.dead_reason or "the worker did not start", started=False
                    )
                else:
                    worker.serve_hidden()  # a fresh worker holding the other parts' modules
                    progress.check(str(BY_MODULE[part].number), f"{part}.train_and_decode", True)
                    run = train_part(worker, PUBLISHED[part], inputs, within)
                    progress.check_done()
            finally:
                worker.close()
            runs.append(run)
            progress.run_done(run_outcome(run))
    finally:
        progress.end()
    return runs


def run_outcome(run: PublicRun) -> str:
    """How a run ended, in a few words for the progress line (never points: a run earns none here)."""
    if not run.started:
        return "did not start"
    verdict = "reached the threshold" if run.passed else "did not reach the threshold"
    if run.epochs is None:
        return verdict
    if run.passed and run.epochs.stopped_at is not None:
        return f"{verdict} at epoch {run.epochs.stopped_at} of {run.epochs.of}"
    return f"{verdict}, {run.epochs.last} of {run.epochs.of} epochs trained"


def table(runs: list[PublicRun], own_parts: bool = False) -> str:
    """The lines `check --train` prints: per part, its score on the public test scenes next to the threshold and the
    verdict; under it why the verdict failed, how many epochs the run trained (and where it stopped), the two image
    controls each beside what a model that reads the image reaches (CONTROLS_EXPECTED), and Part 1's trained
    recall@1 next to its threshold. `own_parts`: the runs used the student's own modules of OTHER_PARTS (the
    handout), which a failed run's last line names."""
    lines = []
    for run in runs:
        published = PUBLISHED[run.part]
        verdict = "reaches the threshold" if run.passed else "FAILS"
        if not run.started:
            lines.append(f"{run.part}: {verdict}: {_indented(run.failure or 'the run did not start')}")
            continue
        if run.score is None:
            why = run.failure or "nothing to score in the run's reply"
            lines.append(f"{run.part}: {verdict}: {_indented(why)}")
        else:
            lines.append(f"{run.part}: {published.metric} {run.score:.3f} (threshold {published.threshold}): {verdict}")
            if run.failure:
                lines.append(f"    {_indented(run.failure)}")
            if run.also:
                lines.append(f"    {run.also}")
        if run.epochs is not None:
            lines.append(f"    {run.epochs}")
        if run.score is not None:
            lines.extend(control_lines(run))
        if published.retrieval:
            bar = published.retrieval
            if run.recall is None:
                why = run.recall_failure or "nothing to score: the run ended without a reply"
                lines.append(f"    {bar.metric}: - (threshold {bar.threshold}): {_indented(why)}")
            else:
                passed = "reaches the threshold" if run.recall >= bar.threshold else "FAILS"
                lines.append(f"    {bar.metric} {run.recall:.3f} (threshold {bar.threshold}): {passed}")
        others = OTHER_PARTS[run.part]
        if own_parts and not run.passed and others:
            names = " and ".join(", ".join(f"{p}.py" for p in others).rsplit(", ", 1))
            lines.append(
                f"    this run used your own {names}, where the grader uses the reference versions: a bug "
                f"there can be the cause"
            )
    return "\n".join(lines)


CONTROL_NAMES = {"zeroed": "zeroed images", "shuffled": "shuffled images (each scene given another's)"}


def control_lines(run: PublicRun) -> list[str]:
    """The image controls of a run: the same trained model captioning the same test scenes without their images
    and with another scene's, each score beside what a model that reads the image reaches there. They inform; the
    verdict never reads them."""
    metric = PUBLISHED[run.part].metric
    lines = ["    image controls (the same model, the same test scenes; they do not count in the verdict):"]
    for name in CONTROLS:
        expected = CONTROLS_EXPECTED[run.part][name]
        got = run.controls.get(name)
        got = f"{got:.3f}" if got is not None else "-"
        lines.append(
            f"        {CONTROL_NAMES[name]}: {metric} {got} (expected {expected.words} for a model that "
            f"reads the image: {expected.why})"
        )
    return lines


def _indented(text: str) -> str:
    """A failure's text under its part's line: its first 12 lines, the later ones indented."""
    return "\n".join(text.splitlines()[:12]).replace("\n", "\n    ")
