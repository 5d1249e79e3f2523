"""The hard-attention recipe's measured settings (docs/thresholds.md, "A hard-attention setting that needs
REINFORCE"): `mix` and `lam` reach the student's HardAttentionLoss, `blind_start` zeroes the model's initial h and c,
`centre` takes each grid's mean annotation away; without them the recipe trains as the graded check does."""

from types import SimpleNamespace

import pytest
import torch

import solutions.attention
import solutions.decoding
import solutions.reinforce
from autograder.worker import recipes
from autograder.worker.recipes import reinforce as reinforce_recipes
from shared.encoder import D_ANN, GRID
from tests.recipe_data import write_split


@pytest.fixture
def split(tmp_path) -> str:
    """32 training scenes and 8 test scenes, random grids whose mean annotation is far from zero."""
    return write_split(tmp_path, 32, 8, offset=3.0)


@pytest.fixture
def seen(monkeypatch):
    """A student module that is the reference, recording what the recipe passes its HardAttentionLoss and what the
    model's init_state returns to its decoder."""
    monkeypatch.setattr(recipes, "REFERENCES", {"attention": solutions.attention, "decoding": solutions.decoding})
    record = {"loss": [], "states": []}

    class Loss(solutions.reinforce.HardAttentionLoss):
        def __init__(self, features, captions, **kwargs):
            record["loss"].append({"features": features, **kwargs})
            super().__init__(features, captions, **kwargs)

    class Decoder(solutions.reinforce.HardAttentionDecoder):
        def init_state(self, features):
            state = super().init_state(features)
            if features.shape[0]:  # not the report's (empty with shown=0)
                record["states"].append(state)
            return state

    record["student"] = SimpleNamespace(HardAttentionLoss=Loss, HardAttentionDecoder=Decoder)
    return record


def train(split: str, student, **setting) -> dict:
    return reinforce_recipes.train_and_decode(
        student, data=split, epochs=1, batch_size=16, lr=3e-3, seed=0, shown=0, **setting
    )


def test_without_settings_the_loss_keeps_its_defaults_and_the_state_knows_the_image(split, seen):
    train(split, seen["student"])
    assert set(seen["loss"][0]) == {"features", "seed"}
    h, c, features, _ = seen["states"][-1]
    assert h.abs().sum() > 0 and c.abs().sum() > 0
    assert features[..., :D_ANN].mean().item() == pytest.approx(3.0, abs=0.1)


def test_the_settings_reach_the_loss_the_initial_state_and_the_grids(split, seen):
    train(split, seen["student"], mix=0.0, lam=1.0, blind_start=True, centre=True)
    loss = seen["loss"][0]
    assert (loss["mix"], loss["lam"]) == (0.0, 1.0)
    # centred grids: each grid's annotations (the coordinates aside) average to zero
    assert loss["features"][..., :D_ANN].mean(1).abs().max().item() < 1e-5
    h, c, features, _ = seen["states"][-1]
    assert torch.count_nonzero(h) == 0 and torch.count_nonzero(c) == 0
    assert features[..., :D_ANN].mean(1).abs().max().item() < 1e-5


@pytest.mark.parametrize("rows", [1, 7, 32, 100])
def test_the_training_grids_made_block_by_block_equal_the_whole_made_at_once(split, rows):
    d = recipes.load_split(split)
    transform = lambda g: solutions.attention.with_coords(g - g.mean(1, keepdim=True), GRID)  # noqa: E731
    blocks = recipes.training_grids_through(d["encoder_file"], transform, rows=rows)
    assert blocks.shape == (32, 64, D_ANN + 2) and torch.equal(blocks, transform(d["grids"]))
