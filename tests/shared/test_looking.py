"""Part 5's look policy (shared.looking) and its verdict (training_verdicts.look_score_of): the cells an object
covers, the score, a policy that gets no gradient, and replies that are not weights."""

import pytest
import torch

import solutions.reinforce
from autograder.public.compare import CheckFailed
from autograder.public.training_verdicts import look_score_of
from shared.looking import NAMES, LookPolicy, look_score, look_weights, objects_of, train_look_policy
from shared.scenes import make_scenes

SQUARE = {"color": "red", "shape": "square", "cx": 5.5, "cy": 5.5, "r": 3.5, "row": 0, "col": 0}


def test_an_object_covers_the_cells_its_pixels_fall_in():
    """A square over pixels 2 .. 9 each way lies in the cells 0 .. 2 of rows 0 .. 2 of the 8 x 8 grid (4 pixels
    a cell)."""
    objects = objects_of([[], [SQUARE]])
    assert objects["scene"].tolist() == [1]
    assert NAMES[objects["name"].item()] == ("red", "square")
    covered = torch.nonzero(objects["cells"][0]).flatten().tolist()
    assert covered == [0, 1, 2, 8, 9, 10, 16, 17, 18]


def test_the_score_is_the_weight_on_the_cells_of_the_object_asked_about():
    objects = objects_of([[SQUARE]])
    name = objects["name"].item()
    weights = torch.full((1, len(NAMES), 64), 1 / 64)
    assert look_score(weights, objects) == pytest.approx(9 / 64)
    weights[0, name] = torch.nn.functional.one_hot(torch.tensor(9), 64).float()  # inside the square
    assert look_score(weights, objects) == 1.0
    weights[0, name] = torch.nn.functional.one_hot(torch.tensor(3), 64).float()  # beside it
    assert look_score(weights, objects) == 0.0
    weights[0, (name + 1) % len(NAMES)] = torch.nn.functional.one_hot(torch.tensor(9), 64).float()  # another name
    assert look_score(weights, objects) == 0.0


class _NoGradient:
    """The reference's functions, but a loss that carries no gradient (a detached log-probability)."""

    sample_location = staticmethod(solutions.reinforce.sample_location)
    update_baseline = staticmethod(solutions.reinforce.update_baseline)

    @staticmethod
    def reinforce_loss(log_probs, rewards, baseline=0.0, mask=None):
        return solutions.reinforce.reinforce_loss(log_probs.detach(), rewards, baseline, mask)


def _scenes(n=60, seed=3):
    scenes = make_scenes(n, seed, keep_images=False)
    features = torch.randn(n, 64, 6, generator=torch.Generator().manual_seed(seed))
    return features, objects_of(scenes.objects)


def test_a_loss_without_a_gradient_leaves_the_policy_as_it_started():
    features, objects = _scenes()
    torch.manual_seed(11)
    fresh = LookPolicy(features.shape[-1])
    trained = train_look_policy(_NoGradient, features, objects, seed=11)
    for before, after in zip(fresh.parameters(), trained.parameters(), strict=True):
        assert torch.equal(before, after)
    moved = train_look_policy(solutions.reinforce, features, objects, seed=11)
    assert any(not torch.equal(a, b) for a, b in zip(fresh.parameters(), moved.parameters(), strict=True))


def test_the_policy_is_asked_about_every_name_on_every_scene():
    features, objects = _scenes(n=5)
    weights = look_weights(LookPolicy(features.shape[-1]), features)
    assert weights.shape == (5, len(NAMES), 64) and weights.dtype == torch.float32
    assert torch.allclose(weights.sum(-1), torch.ones(5, len(NAMES)))


def test_every_name_at_once_weighs_as_each_name_asked_alone():
    features, _ = _scenes(n=3)
    torch.manual_seed(0)
    policy = LookPolicy(features.shape[-1])
    every = look_weights(policy, features)
    with torch.no_grad():
        for i, name in enumerate(NAMES):
            alone = policy(features, torch.full((3,), NAMES.index(name)))
            torch.testing.assert_close(every[:, i], alone)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (None, r"expected a float tensor of shape \(2, 12, 64\), got NoneType"),
        (torch.full((2, 12, 63), 1 / 63), r"expected a float tensor of shape \(2, 12, 64\), got \(2, 12, 63\)"),
        (torch.ones(2, 12, 64, dtype=torch.long), "expected a float tensor"),
        (torch.full((2, 12, 64), float("nan")), "expected finite non-negative weights"),
        (torch.full((2, 12, 64), 1 / 64) - torch.eye(64)[0] * 0.5, "expected finite non-negative weights"),
        (torch.ones(2, 12, 64), "expected each row to sum to 1"),
    ],
)
def test_a_reply_that_is_not_the_weights_of_every_name_on_every_test_scene_fails_and_says_why(weights, message):
    test = make_scenes(2, 5, keep_images=False)
    with pytest.raises(CheckFailed, match=message):
        look_score_of({"look": weights}, test)
    assert 0.0 <= look_score_of({"look": torch.full((2, 12, 64), 1 / 64)}, test) <= 1.0
