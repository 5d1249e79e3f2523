"""Reference checks for Part 4 (solutions/attention.py): attention step, coordinates, the decoder."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from shared.vocab import END, PAD, START, VOCAB_SIZE
from solutions.attention import AttnCaptioner, attend, soft_attention_loss, with_coords


def _captions(n: int, T: int = 10, seed: int = 0) -> torch.Tensor:
    """Random well-formed token rows: START, words, END, PAD padding."""
    g = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(n):
        k = int(torch.randint(1, T - 1, (), generator=g))
        words = torch.randint(3, VOCAB_SIZE, (k,), generator=g).tolist()
        rows.append([START] + words + [END] + [PAD] * (T - 2 - k))
    return torch.tensor(rows)


def test_attend_matches_sdpa_float64():
    g = torch.Generator().manual_seed(0)
    q = torch.randn(5, 16, generator=g, dtype=torch.float64)
    k = torch.randn(5, 64, 16, generator=g, dtype=torch.float64)
    v = torch.randn(5, 64, 16, generator=g, dtype=torch.float64)
    context, weights = attend(q, k, v)
    reference = F.scaled_dot_product_attention(q.unsqueeze(1), k, v).squeeze(1)
    torch.testing.assert_close(context, reference, rtol=1e-10, atol=1e-12)
    assert weights.shape == (5, 64)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5, dtype=torch.float64))


def test_attend_value_width_differs_from_key_width():
    g = torch.Generator().manual_seed(1)
    q, k, v = torch.randn(3, 8, generator=g), torch.randn(3, 10, 8, generator=g), torch.randn(3, 10, 50, generator=g)
    context, weights = attend(q, k, v)
    assert context.shape == (3, 50) and weights.shape == (3, 10)
    torch.testing.assert_close(context, torch.einsum("nl,nld->nd", weights, v))


def test_attend_uniform_keys_give_the_mean():
    g = torch.Generator().manual_seed(2)
    q = torch.randn(4, 8, generator=g)
    k = torch.randn(4, 1, 8, generator=g).expand(4, 64, 8)  # every location has the same key
    v = torch.randn(4, 64, 12, generator=g)
    context, weights = attend(q, k, v)
    torch.testing.assert_close(weights, torch.full((4, 64), 1 / 64))
    torch.testing.assert_close(context, v.mean(1))


def test_attend_leaves_inputs_alone_and_rejects_bad_shapes():
    q, k, v = torch.randn(2, 4), torch.randn(2, 6, 4), torch.randn(2, 6, 3)
    copies = [t.clone() for t in (q, k, v)]
    attend(q, k, v)
    assert all(torch.equal(a, b) for a, b in zip((q, k, v), copies))
    with pytest.raises(ValueError, match="keys"):
        attend(q, torch.randn(2, 6, 5), v)


def test_with_coords_corners_grid_8():
    f = torch.randn(2, 64, 48)
    out = with_coords(f, 8)
    assert out.shape == (2, 64, 50) and out.dtype == f.dtype
    torch.testing.assert_close(out[..., :48], f)
    coords = out[0, :, 48:]
    torch.testing.assert_close(coords[0], torch.tensor([-0.875, -0.875]))  # top-left
    torch.testing.assert_close(coords[7], torch.tensor([-0.875, 0.875]))  # top-right
    torch.testing.assert_close(coords[56], torch.tensor([0.875, -0.875]))  # bottom-left
    torch.testing.assert_close(coords[63], torch.tensor([0.875, 0.875]))  # bottom-right
    torch.testing.assert_close(coords[9], torch.tensor([-0.625, -0.625]))  # row 1, column 1
    torch.testing.assert_close(out[1, :, 48:], coords)


def test_with_coords_validates_grid():
    with pytest.raises(ValueError, match="features"):
        with_coords(torch.randn(2, 63, 48), 8)


def test_forward_shapes_and_weights():
    torch.manual_seed(0)
    model = AttnCaptioner()
    features, captions = torch.randn(3, 64, 50), _captions(3)
    logits, weights = model(features, captions)
    assert logits.shape == (3, 9, VOCAB_SIZE) and weights.shape == (3, 9, 64)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 9))
    loss = soft_attention_loss(
        model,
        features,
        captions,
        lambda lg, y: F.cross_entropy(lg.reshape(-1, lg.shape[-1]), y[:, 1:].reshape(-1), ignore_index=PAD),
    )
    loss.backward()
    assert model.Wq.weight.grad.abs().sum() > 0 and model.Wk.weight.grad.abs().sum() > 0


def test_attention_depends_on_the_previous_hidden_state():
    torch.manual_seed(0)
    model = AttnCaptioner()
    _, weights = model(torch.randn(3, 64, 50), _captions(3))
    (weights * torch.randn_like(weights)).sum().backward()
    # the maps are a function of h_{t-1}: of the initial state and of the words read so far
    assert model.init_h.weight.grad.abs().sum() > 0 and model.emb.weight.grad.abs().sum() > 0


def test_step_by_step_equals_teacher_forcing():
    torch.manual_seed(1)
    model = AttnCaptioner(D=48).double()
    features, captions = torch.randn(4, 64, 48, dtype=torch.float64), _captions(4, seed=1)
    logits, _ = model(features, captions)
    state = model.init_state(features)
    assert all(s.shape[0] == 4 for s in state)
    for t in range(captions.shape[1] - 1):
        log_probs, state = model.step(captions[:, t], state)
        torch.testing.assert_close(log_probs, F.log_softmax(logits[:, t], -1), rtol=1e-10, atol=1e-10)


def test_a_training_failure_names_a_step_that_disagrees_with_forward(tmp_path, monkeypatch):
    """Part 4's training recipe tells the student's step and forward apart on the trained model, as Part 1's does (one
    epoch on a small split stands in for the run): the reference's agree; a forward fed the word it must predict,
    beside a correct step, does not, and a failed training check says so (known_causes)."""
    import importlib.util

    import solutions.attention
    import solutions.decoding
    import solutions.show_and_tell
    from autograder.public.published_training import PUBLISHED
    from autograder.public.training_verdicts import known_causes
    from autograder.worker import recipes
    from autograder.worker.recipes import attention as attention_recipes
    from tests.meta.variants import ROOT, all_variants
    from tests.recipe_data import write_split

    monkeypatch.setattr(
        recipes, "REFERENCES", {"show_and_tell": solutions.show_and_tell, "decoding": solutions.decoding}
    )
    split = write_split(tmp_path, 32, 8)

    def trained(student) -> dict:
        return attention_recipes.train_and_decode(
            student,
            data=split,
            grid=PUBLISHED["attention"].options["grid"],
            epochs=1,
            batch_size=16,
            lr=3e-3,
            seed=0,
            shown=0,
        )

    reply = trained(solutions.attention)
    assert reply["step_agrees_with_forward"] is True and known_causes(reply) == []
    variant = next(v for v in all_variants() if v.part == "attention" and v.name == "forward_feeds_the_next_word")
    broken = importlib.util.module_from_spec(importlib.util.spec_from_loader("broken_attention", loader=None))
    exec(variant.apply((ROOT / "solutions" / "attention.py").read_text()), broken.__dict__)
    reply = trained(broken)
    assert reply["step_agrees_with_forward"] is False
    assert any("disagrees with your forward" in cause for cause in known_causes(reply)), known_causes(reply)
