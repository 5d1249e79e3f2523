"""Training on the public data: `check --train`.

`check --train` trains each trained part as its training check does, with the worker's recipe
(`<part>.train_and_decode`, autograder/worker/recipes) and the published budget (autograder.public.published_training),
on the public scenes (training scenes of seed 0, test scenes of seed 1: shared.encoder.load_data's defaults), stops
where the run reaches the threshold as the grader stops it, and prints its score next to the threshold, the epoch it
stopped at, and the lab's two image controls beside what a model that reads the image reaches there (train_parts;
autograder.public.training_report). A recipe trains and decodes with other parts' code (OTHER_PARTS: Part 1's loss,
Part 2's decoder, Part 4's model), which the part's worker holds beside the student's module (client.Worker's
`references`): the kit's `python -m autograder check --train` sends the reference versions and runs within the
grader's time budget; the student handout's `python -m autograder.public check --train` sends the student's own
modules and runs within a fixed limit (limits.TimeLimits.training), having no reference to time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from autograder.public.client import StudentError, StudentWorker, WorkerDied
from autograder.public.compare import CheckFailed
from autograder.public.outcomes import raised_at
from autograder.public.progress import Progress
from autograder.public.published_training import PUBLISHED, Published, reached
from autograder.public.staging import StagingError
from autograder.public.trained_retrieval import RetrievalSet, recall_at_1_of, retrieval_inputs, retrieval_set
from autograder.public.training_verdicts import reply
from shared.encoder import CaptionData, Split
from shared.looking import objects_of
from shared.parts import BY_MODULE, TODO_MESSAGE
from shared.scenes import Scenes

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


def split_index(train: Split, encoder_file: str) -> dict:
    """The file a training recipe reads its inputs from (autograder.worker.recipes.load_split): the training tokens
    and targets of `train`, its objects with the cells each covers (shared.looking.objects_of: Part 5's look policy
    learns from them), and the path of the encoder's outputs of both splits (shared.encoder.load_data's cache file),
    which the worker memory-maps. Inputs only: the test references and the test scenes' objects stay with the judge."""
    return {
        "tokens": train.scenes.tokens,
        "targets": list(train.scenes.targets),
        "look": objects_of(train.scenes.objects),
        "encoder_file": encoder_file,
    }


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
