"""StyleNet's training check stops the student's own loop (train_stylenet, given code) once the grader has seen its
captions reach the threshold, as the kit's loop does for Parts 1, 4, 5 and 6: the recipe
(autograder/worker/recipes/stylenet.py) passes train_stylenet a styled_step that runs the student's update and,
after each epoch's last one, sends the captions of the model as it stands for judging. A stopped run must be the
shorter run exactly, and a run never stopped the run without judging."""

import pytest
import torch

import solutions.decoding
import solutions.show_and_tell
import solutions.stylenet
from autograder.worker import recipes
from autograder.worker.recipes import stylenet as stylenet_recipes
from tests.recipe_data import write_split

BATCH = 16


@pytest.fixture
def split(tmp_path) -> str:
    """48 training scenes (3 batches per epoch) and 8 test scenes, random grids."""
    return write_split(tmp_path, 48, 8)


@pytest.fixture
def references(monkeypatch):
    """The references the recipe uses, and a styled corpus of 64 captions in place of 3000 (rendering fewer
    scenes; the recipe takes the student module's styled_corpus())."""
    monkeypatch.setattr(
        recipes, "REFERENCES", {"show_and_tell": solutions.show_and_tell, "decoding": solutions.decoding}
    )
    corpus = solutions.stylenet.styled_corpus(64, seed=7)
    monkeypatch.setattr(solutions.stylenet, "styled_corpus", lambda: corpus)


def train(split: str, epochs: int, evaluate=None) -> dict:
    """The recipe's reply for the reference StyleNet; with `evaluate(epoch, epochs, tokens) -> bool` as the grader
    (as a worker's progress messages reach it), else with no grader to judge (nothing is judged)."""
    if evaluate is not None:
        recipes._report_progress = lambda epoch, n, loss, tokens=None: (
            tokens is not None and evaluate(epoch, n, tokens) is True
        )
    try:
        return stylenet_recipes.train_and_decode(
            solutions.stylenet,
            data=split,
            epochs=epochs,
            batch_size=BATCH,
            lr=3e-3,
            seed=0,
            max_len=solutions.stylenet.T_STYLE,
        )
    finally:
        recipes._report_progress = None


def assert_same_reply(a: dict, b: dict) -> None:
    assert a["factual_losses"] == b["factual_losses"] and a["styled_losses"] == b["styled_losses"]
    assert set(a["tokens"]) == set(b["tokens"]) == {"factual", "romantic"}
    assert all(torch.equal(a["tokens"][style], b["tokens"][style]) for style in a["tokens"])


def test_a_stopped_stylenet_run_is_the_shorter_run_exactly(split, references):
    judged = []

    def stop_after_two(epoch, epochs, tokens):
        judged.append((epoch, epochs, {style: t.clone() for style, t in tokens.items()}))
        return epoch == 2

    stopped = train(split, 4, stop_after_two)
    assert [(e, n) for e, n, _ in judged] == [(1, 4), (2, 4)]
    # what it returns is what the grader judged at epoch 2, and the run of 2 epochs, bit for bit
    assert all(torch.equal(stopped["tokens"][style], judged[-1][2][style]) for style in ("factual", "romantic"))
    assert_same_reply(stopped, train(split, 2))


def test_a_stylenet_run_never_stopped_trains_as_without_judging(split, references):
    judged = []
    judged_run = train(split, 3, lambda epoch, epochs, tokens: judged.append(epoch) and False)
    assert judged == [1, 2]  # every epoch but the last, once each
    assert_same_reply(judged_run, train(split, 3))
