"""A reply check: a second check graded on the same training run's reply (autograder/grader/training/,
ReplyCheck), here Part 1's trained retrieval. Without training: a small split of generated scenes stands in for the
hidden retrieval split, and hand-made score matrices stand in for what a worker returns."""

from __future__ import annotations

import re

import pytest
import torch

from autograder.grader.context import GradingContext
from autograder.grader.rubric import load as load_rubric
from autograder.grader.training import SPECS, TrainedRun, hidden_retrieval_set, trained_recall_at_1
from autograder.public.compare import CheckFailed
from autograder.public.trained_retrieval import distinct_scenes
from autograder.worker.recipes.show_and_tell import RETRIEVAL_BATCH, retrieval_of
from shared.encoder import Split
from shared.scenes import make_scenes
from solutions import show_and_tell as reference

SPEC = SPECS["show_and_tell"]
RETRIEVAL = SPEC.reply_checks[0]


class SmallContext(GradingContext):
    """A grading context whose retrieval split is 120 generated scenes with random grids (no encoder)."""

    @property
    def retrieval_split(self) -> Split:
        scenes = make_scenes(120, 7, keep_images=False)
        grids = torch.randn(len(scenes), 4, 3, generator=torch.Generator().manual_seed(0))
        return Split(scenes, grids, torch.zeros(len(scenes), 7))


@pytest.fixture
def ctx(tmp_path):
    return SmallContext(tmp_path / "grader")


def sent(in_scene_order: torch.Tensor, ctx) -> dict:
    """The reply of a worker whose scores, with the columns in scene order, are `in_scene_order` (I, C): the
    columns as the worker sees the captions (sent caption c is scene order[c]'s)."""
    return {"retrieval": {"scores": in_scene_order[:, hidden_retrieval_set(ctx).order]}}


def test_distinct_scenes_leave_each_caption_one_image_it_describes():
    scenes = make_scenes(400, 3, keep_images=False)
    kept = distinct_scenes(scenes.targets, scenes.references)
    assert 50 < len(kept) < 400
    for a in kept:
        others = [b for b in kept if b != a]
        assert not any(scenes.targets[a] in scenes.references[b] for b in others)
    dropped = sorted(set(range(400)) - set(kept))
    for k in dropped:  # each dropped scene shares a caption with a scene kept before it
        assert any(
            scenes.targets[k] in scenes.references[j] or scenes.targets[j] in scenes.references[k]
            for j in kept
            if j < k
        )


def test_the_captions_are_sent_in_an_order_only_the_grader_knows(ctx):
    retrieval = hidden_retrieval_set(ctx)
    n = len(retrieval.order)
    assert sorted(retrieval.order.tolist()) == list(range(n))
    assert (retrieval.order != torch.arange(n)).float().mean() > 0.9
    split = ctx.retrieval_split
    kept = distinct_scenes(split.scenes.targets, split.scenes.references)
    assert torch.equal(retrieval.captions, split.scenes.tokens[kept][retrieval.order])
    assert torch.equal(retrieval.features, split.grids[kept])
    assert torch.equal(hidden_retrieval_set(ctx).order, retrieval.order)  # the same in every run: deterministic grades


def test_recall_is_computed_in_scene_order(ctx):
    n = len(hidden_retrieval_set(ctx).order)
    right = -torch.rand(n, n, generator=torch.Generator().manual_seed(1), dtype=torch.float64) - 1
    right.fill_diagonal_(0.0)  # each caption's own image scores best
    assert trained_recall_at_1(sent(right, ctx), ctx) == 1.0
    one_wrong = right.clone()
    one_wrong[1, 0] = 0.0  # a tie with the true image counts against it
    assert trained_recall_at_1(sent(one_wrong, ctx), ctx) == pytest.approx(1 - 1 / n)
    # A worker that ignores the model: a diagonal in the order it sees, or the scores transposed.
    assert trained_recall_at_1({"retrieval": {"scores": torch.eye(n)}}, ctx) < 0.05
    assert trained_recall_at_1({"retrieval": {"scores": sent(right, ctx)["retrieval"]["scores"].T}}, ctx) < 0.05


@pytest.mark.parametrize(
    "scores, says",
    [
        (None, "expected a floating (images, captions) tensor, got NoneType"),
        (torch.zeros(3, 3, dtype=torch.long), "got torch.int64 of shape (3, 3)"),
        (torch.zeros(3, 4), "expected one row per image and one column per caption"),
        ("nan", "not finite"),
    ],
)
def test_a_malformed_reply_fails_naming_what_is_wrong(ctx, scores, says):
    if isinstance(scores, str):
        n = len(hidden_retrieval_set(ctx).order)
        scores = torch.zeros(n, n)
        scores[2, 3] = float("nan")
    with pytest.raises(CheckFailed, match=re.escape(says)):
        trained_recall_at_1({"retrieval": {"scores": scores}}, ctx)
    with pytest.raises(CheckFailed, match="raised ValueError: bad k"):
        trained_recall_at_1({"retrieval": {"raised": "ValueError", "message": "bad k"}}, ctx)


def test_what_the_student_s_exception_carries_reaches_staff_only(ctx):
    """The student's code held the hidden retrieval split when it raised: its message, and a kind it named itself,
    may carry that split, and so may the kind (one of 70, chosen by the split: A58), so the student sees that it
    raised; staff see the kind and the message."""
    leak = "LEAK<<captions 3 7 1>>"
    with pytest.raises(CheckFailed) as failed:
        trained_recall_at_1({"retrieval": {"raised": leak, "message": leak}}, ctx)
    assert failed.value.safe == "retrieval_scores on the trained model raised an exception"
    assert leak in str(failed.value)
    with pytest.raises(CheckFailed) as failed:
        trained_recall_at_1({"retrieval": {"raised": "IndexError", "message": leak}}, ctx)
    assert failed.value.safe == "retrieval_scores on the trained model raised an exception"
    assert "IndexError" in str(failed.value)


def test_the_reply_check_judges_the_run_its_training_check_kept(ctx):
    n = len(hidden_retrieval_set(ctx).order)
    right = torch.zeros(n, n, dtype=torch.float64) - 1
    right.fill_diagonal_(0.0)
    RETRIEVAL.judge_kept(TrainedRun(sent(right, ctx), passed=True), SPEC, ctx)
    with pytest.raises(CheckFailed, match=r"recall@1 0\.0\d\d, threshold") as failed:
        RETRIEVAL.judge_kept(TrainedRun({"retrieval": {"scores": torch.eye(n)}}, passed=True), SPEC, ctx)
    assert "may be the cause" not in str(failed.value)
    with pytest.raises(CheckFailed, match="did not pass trained_show_and_tell_reaches_the_threshold either"):
        RETRIEVAL.judge_kept(TrainedRun({"retrieval": {"scores": torch.eye(n)}}, passed=False), SPEC, ctx)
    with pytest.raises(CheckFailed, match="no trained model to score"):
        RETRIEVAL.judge_kept(None, SPEC, ctx)
    ended = TimeoutError("the training run exceeded its time budget")
    with pytest.raises(TimeoutError) as raised:  # a run that ended without a reply: failed as the training check
        RETRIEVAL.judge_kept(ended, SPEC, ctx)
    assert raised.value is ended


def test_a_kept_reply_does_not_outlive_its_grading_run(ctx):
    ctx.keep_reply("show_and_tell", TrainedRun({}, passed=True))
    assert ctx.kept_reply("show_and_tell") is not None
    ctx.take_artifacts()  # engine.grade, at the start and the end of every run
    assert ctx.kept_reply("show_and_tell") is None


def test_each_reply_check_comes_after_its_training_check_in_the_rubric():
    for part, spec in SPECS.items():
        order = list(load_rubric()[part])
        for extra in spec.reply_checks:
            assert order.index(extra.check) > order.index(spec.check), (part, extra.check)


def test_the_recipe_reports_a_slow_or_unwritten_scorer_instead_of_failing_the_run(tmp_path):
    torch.manual_seed(0)
    model = reference.ShowTellRNN(n_vocab=7, D=3, L=4, E=5, H=6)
    features, captions = torch.randn(5, 4, 3), torch.randint(1, 7, (5, 6))
    path = tmp_path / "retrieval.pt"
    torch.save({"features": features, "captions": captions}, path)
    got = retrieval_of(reference, model, str(path), seconds=60)
    with torch.no_grad():
        assert torch.equal(got["scores"], reference.retrieval_scores(model, features, captions))

    class Counting:  # the recipe bounds the pairs per call (a grade's peak memory), through the contract's argument
        sizes = []

        @staticmethod
        def retrieval_scores(model, features, captions, batch_size=4096):
            Counting.sizes.append(batch_size)
            return reference.retrieval_scores(model, features, captions, batch_size)

    retrieval_of(Counting, model, str(path), seconds=60)
    assert Counting.sizes == [RETRIEVAL_BATCH]
    slow = retrieval_of(reference, model, str(path), seconds=0)  # past its time at the first call of the model
    assert slow["raised"] == "TimeoutError" and "one pair per call" in slow["message"]

    class Unwritten:
        @staticmethod
        def retrieval_scores(model, features, captions, batch_size=4096):
            raise NotImplementedError("Part 1 (show_and_tell): retrieval_scores")

    assert retrieval_of(Unwritten, model, str(path), seconds=60)["raised"] == "NotImplementedError"
