"""The shared code: scenes, vocabulary, caption grammar, metrics, encoder and training loop.

Bad input must raise an error that names the argument; good input must give the lecture's values.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from shared.captions import classify_failure, content_slots, parse_caption, romantic
from shared.encoder import Encoder, load_data
from shared.metrics import exact_match, failure_counts, style_scores
from shared.scenes import COLOR_WORDS, SHAPES, make_scenes, relation
from shared.training import seed_everything, train
from shared.vocab import END, START, VOCAB, VOCAB_SIZE, decode, decode_batch, encode

ROOT = Path(__file__).resolve().parents[2]


# --- scenes ---------------------------------------------------------------------------------------


def test_scenes_reproduce_the_lecture_targets():
    scenes = make_scenes(3, seed=0)
    assert scenes.targets == [
        "a red triangle above a green circle",
        "a green triangle above a yellow circle",
        "a red triangle left of a green square",
    ]
    assert scenes.attributes[0].int().tolist() == [1, 1, 0, 0, 1, 0, 1]


def test_scenes_reproduce_the_lecture_pixels():
    """The cached encoder outputs (shared/encoder.py) are keyed by the seeds, not the pixels: a change to the drawing
    must show here."""
    assert float(make_scenes(3, seed=0).images.double().sum()) == pytest.approx(7977.848295, abs=1e-5)


@pytest.mark.parametrize("max_objects", [2, 3])
def test_scenes_without_images_are_the_same_scenes(max_objects):
    drawn, captions_only = make_scenes(300, 4, max_objects), make_scenes(300, 4, max_objects, keep_images=False)
    assert captions_only.images is None
    assert captions_only.objects == drawn.objects and captions_only.references == drawn.references
    assert captions_only.targets == drawn.targets and torch.equal(captions_only.tokens, drawn.tokens)
    assert torch.equal(captions_only.attributes, drawn.attributes) and drawn.attributes.dtype == torch.float32
    for objects, row in zip(drawn.objects, drawn.attributes):  # 4 colours, then 3 shapes, multi-hot
        present = {o["color"] for o in objects} | {o["shape"] for o in objects}
        assert [name for name, bit in zip(COLOR_WORDS + SHAPES, row.tolist()) if bit == 1.0] == [
            name for name in COLOR_WORDS + SHAPES if name in present
        ] and set(row.tolist()) <= {0.0, 1.0}


def test_same_seed_same_pixels_other_seed_other_pixels():
    a, b, c = make_scenes(20, seed=5), make_scenes(20, seed=5), make_scenes(20, seed=6)
    assert torch.equal(a.images, b.images) and a.references == b.references
    assert not torch.equal(a.images, c.images)


@pytest.mark.parametrize("max_objects", [2, 3])
def test_every_ordered_pair_of_objects_is_a_reference_that_parses(max_objects):
    scenes = make_scenes(200, seed=3, max_objects=max_objects)
    assert scenes.images.shape == (200, 3, 32, 32) and scenes.images.dtype == torch.float32
    assert 0 <= scenes.images.min() and scenes.images.max() <= 1
    sizes = set()
    for objects, refs, target in zip(scenes.objects, scenes.references, scenes.targets):
        sizes.add(len(objects))
        assert len(refs) == len(objects) * (len(objects) - 1) and target in refs
        for ref in refs:
            p = parse_caption(ref)
            subj = next(o for o in objects if (o["color"], o["shape"]) == p["subj"])
            obj = next(o for o in objects if (o["color"], o["shape"]) == p["obj"])
            assert p["rel"] == relation(subj, obj)
    assert sizes == set(range(2, max_objects + 1))


def test_relation_rule_rows_first_then_columns():
    assert relation(dict(row=0, col=2), dict(row=1, col=0)) == "above"
    assert relation(dict(row=2, col=0), dict(row=1, col=0)) == "below"
    assert relation(dict(row=1, col=0), dict(row=1, col=2)) == "left of"
    assert relation(dict(row=1, col=2), dict(row=1, col=0)) == "right of"


@pytest.mark.parametrize("kwargs, name", [(dict(n=0, seed=0), "n"), (dict(n=5, seed=0, max_objects=4), "max_objects")])
def test_make_scenes_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        make_scenes(**kwargs)


# --- vocabulary -------------------------------------------------------------------------------------


def test_encode_decode_round_trip():
    caption = "a red circle left of a blue square"
    ids = encode(caption)
    assert ids[0] == START and ids[9] == END and len(ids) == 10 and VOCAB_SIZE == 27
    assert decode(ids) == caption
    assert decode([START, VOCAB.index("a"), END, VOCAB.index("red")]) == "a"


@pytest.mark.parametrize(
    "caption, pattern",
    [
        ("", r"caption: expected at least one word"),
        ("   ", r"caption: expected at least one word"),
        ("a purple circle", r"caption: unknown word\(s\) \['purple'\]"),
        ("a <end> circle", r"caption: unknown word"),
        ("a red circle left of a blue square with the red", r"caption: 11 words need length >= 13"),
    ],
)
def test_encode_rejects_bad_captions(caption, pattern):
    with pytest.raises(ValueError, match=pattern):
        encode(caption)


def test_decode_rejects_ids_outside_the_vocabulary():
    with pytest.raises(ValueError, match=r"ids: token id 27 is outside the vocabulary"):
        decode([START, 27])
    with pytest.raises(ValueError, match=r"tokens: expected a 2-d tensor"):
        decode_batch(torch.tensor([1, 2, 0]))


# --- caption grammar and metrics ------------------------------------------------------------------

SCENE = [dict(color="red", shape="circle"), dict(color="blue", shape="square")]
REFS = ["a red circle above a blue square", "a blue square below a red circle"]


@pytest.mark.parametrize(
    "caption, kind",
    [
        ("a red circle above a blue square", "correct"),
        ("a red circle below a blue square", "wrong relation"),
        ("a green circle above a blue square", "wrong colour"),
        ("a red square above a blue square", "wrong colour"),
        ("a red triangle above a blue square", "wrong shape"),
        ("a yellow triangle above a blue square", "hallucinated object"),
        ("a red circle above a red circle", "same object twice"),
        ("a red circle above", "ungrammatical"),
        ("red circle above a blue square", "ungrammatical"),
    ],
)
def test_failure_classification(caption, kind):
    assert classify_failure(caption, SCENE, REFS) == kind


def test_romantic_rewrite_and_content_slots():
    styled = romantic("a blue circle above a yellow circle")
    assert styled == "the blue circle sits happily above the yellow circle"
    assert content_slots(styled) == ("blue", "circle", "above", "yellow", "circle")
    with pytest.raises(ValueError, match=r"^caption: expected a factual caption"):
        romantic("the blue circle")


def test_metrics_on_hand_made_captions():
    assert exact_match(["a red circle above a blue square", "a red circle"], [REFS, REFS]) == 0.5
    counts = failure_counts(["a red circle below a blue square"], [SCENE], [REFS])
    assert counts["wrong relation"] == 1 and sum(counts.values()) == 1
    scores = style_scores(
        ["the red circle sits happily above the blue square", "a red circle below a blue square"], [REFS, REFS]
    )
    assert scores["style_rate"] == 0.5
    assert scores["per_slot"] == [1.0, 1.0, 0.5, 1.0, 1.0]
    with pytest.raises(ValueError, match=r"exact_match: expected as many captions as reference lists, got 1 and 2"):
        exact_match(["a red circle"], [REFS, REFS])


# --- encoder, data and training loop --------------------------------------------------------------


def test_encoder_grid_shape_and_bad_images():
    grid = Encoder()(torch.rand(2, 3, 32, 32))
    assert grid.shape == (2, 64, 48)
    with pytest.raises(ValueError, match=re.escape("images: expected shape (N, 3, 32, 32), got (2, 32, 32, 3)")):
        Encoder()(torch.rand(2, 32, 32, 3))


def test_load_data_is_deterministic_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPTIONKIT_CACHE", str(tmp_path))
    first = load_data(n_train=96, n_test=16)
    assert list(tmp_path.iterdir()), "the encoder outputs were not cached"
    again = load_data(n_train=96, n_test=16, cache=False)
    assert first.train.grids.shape == (96, 64, 48) and first.test.predicted_attributes.shape == (16, 7)
    torch.testing.assert_close(first.test.grids, again.test.grids, rtol=0, atol=0)
    cached = load_data(n_train=96, n_test=16)
    torch.testing.assert_close(first.train.grids, cached.train.grids, rtol=0, atol=0)


# Run by each of two processes started at once on the same empty cache: says whether it pretrained the encoder.
BUILD_ONCE = (
    "import shared.encoder as e\n"
    "real = e.pretrain_encoder\n"
    "def counted(*args, **kwargs):\n"
    "    print('pretrained', flush=True)\n"
    "    return real(*args, **kwargs)\n"
    "e.pretrain_encoder = counted\n"
    "data = e.load_data(n_train=400, n_test=16)\n"
    "print(float(data.test.grids.sum()))\n"
)


def test_processes_starting_on_an_empty_cache_pretrain_the_encoder_once(tmp_path):
    env = dict(os.environ, CAPTIONKIT_CACHE=str(tmp_path), OMP_NUM_THREADS="1")
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD_ONCE],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 for run in runs), [err[-2000:] for _, err in outputs]
    printed = [out.split() for out, _ in outputs]
    assert sum(lines.count("pretrained") for lines in printed) == 1, printed
    assert printed[0][-1] == printed[1][-1], printed  # both read the same encoder outputs


def test_training_loop_is_deterministic_and_rejects_a_diverging_loss():
    def run():
        seed_everything(0)
        model = torch.nn.Linear(4, 1)
        x, y = torch.randn(40, 4), torch.randn(40, 1)
        return train(model, lambda m, idx: ((m(x[idx]) - y[idx]) ** 2).mean(), 40, 3, 8).losses

    first, second = run(), run()
    assert first == second and first[-1] < first[0]
    model = torch.nn.Linear(1, 1)
    with pytest.raises(FloatingPointError, match=r"train: the loss became nan"):
        train(model, lambda m, idx: m.weight.sum() * float("nan"), 4, 1, 2)


def test_training_stops_after_the_epoch_whose_on_epoch_returns_true():
    def run(stop_after):
        seed_everything(0)
        model = torch.nn.Linear(4, 1)
        x, y = torch.randn(40, 4), torch.randn(40, 1)
        seen = []

        def on_epoch(epoch, epochs, loss):
            seen.append((epoch, epochs))
            return epoch == stop_after

        return train(model, lambda m, idx: ((m(x[idx]) - y[idx]) ** 2).mean(), 40, 5, 8, on_epoch=on_epoch).losses, seen

    full, seen = run(stop_after=None)
    assert len(full) == 5 and seen == [(e, 5) for e in range(1, 6)]
    stopped, seen = run(stop_after=2)
    assert stopped == full[:2] and seen == [(1, 5), (2, 5)]  # the same run, ended after epoch 2
