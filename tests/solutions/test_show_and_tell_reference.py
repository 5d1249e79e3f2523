"""Part 1 reference: parity with nn.RNNCell / nn.RNN and the masked teacher-forcing loss."""

import torch
import torch.nn.functional as F
from torch import nn

from shared.encoder import D_ANN, L_GRID
from shared.vocab import PAD, VOCAB_SIZE
from solutions.show_and_tell import ShowTellLSTM, ShowTellRNN, caption_loss, relu_rnn_step


def test_relu_rnn_step_matches_rnn_cell_float64():
    torch.manual_seed(0)
    cell = nn.RNNCell(5, 7, nonlinearity="relu").double()
    with torch.no_grad():
        cell.bias_hh.zero_()
    x, h = torch.randn(4, 5, dtype=torch.float64), torch.randn(4, 7, dtype=torch.float64)
    ours = relu_rnn_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih)
    torch.testing.assert_close(ours, cell(x, h), rtol=1e-12, atol=1e-12)
    image = torch.randn(4, 7, dtype=torch.float64)
    torch.testing.assert_close(
        relu_rnn_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, image),
        torch.relu(x @ cell.weight_ih.T + h @ cell.weight_hh.T + cell.bias_ih + image),
    )


def test_forward_matches_nn_rnn_when_the_image_term_is_zero():
    torch.manual_seed(0)
    model = ShowTellRNN().double()
    with torch.no_grad():
        model.W_ih.weight.zero_()
    rnn = nn.RNN(32, 96, nonlinearity="relu", batch_first=True).double()
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(model.W_xh.weight)
        rnn.bias_ih_l0.copy_(model.W_xh.bias)
        rnn.weight_hh_l0.copy_(model.W_hh.weight)
        rnn.bias_hh_l0.zero_()
    captions = torch.randint(3, 27, (3, 10))
    hidden, _ = rnn(model.emb(captions[:, :-1]))
    torch.testing.assert_close(model(torch.randn(3, 64, 48, dtype=torch.float64), captions), model.out(hidden))


def test_step_by_step_decoding_equals_teacher_forcing():
    torch.manual_seed(0)
    for model in (ShowTellRNN(), ShowTellLSTM()):
        features, captions = torch.randn(2, 64, 48), torch.randint(3, 27, (2, 6))
        state, steps = model.init_state(features), []
        for t in range(5):
            log_probs, state = model.step(captions[:, t], state)
            steps.append(log_probs)
        torch.testing.assert_close(torch.stack(steps, 1), F.log_softmax(model(features, captions), -1))


def test_caption_loss_ignores_padding():
    logits = torch.randn(2, 3, 27)
    captions = torch.tensor([[1, 5, 6, 2], [1, 7, 2, PAD]])
    by_hand = torch.stack(
        [-F.log_softmax(logits[0, t], -1)[captions[0, t + 1]] for t in range(3)]
        + [-F.log_softmax(logits[1, t], -1)[captions[1, t + 1]] for t in range(2)]
    ).mean()
    torch.testing.assert_close(caption_loss(logits, captions), by_hand)


def test_a_training_failure_names_a_step_that_disagrees_with_forward_and_a_loss_that_did_not_fall():
    """The training recipe tells forward and step apart on the trained model (here: the image entering at the second
    step of forward only), and the training check's failure says so, and says when the loss did not fall."""
    import importlib.util

    from autograder.public.training_verdicts import known_causes
    from autograder.worker.recipes.show_and_tell import step_agrees_with_forward
    from tests.meta.variants import ROOT, all_variants

    torch.manual_seed(0)
    features, captions = torch.randn(3, L_GRID, D_ANN), torch.randint(3, VOCAB_SIZE, (3, 6))
    assert step_agrees_with_forward(ShowTellRNN(), features, captions)
    variant = next(v for v in all_variants() if v.name == "image_at_the_second_step")
    spec = importlib.util.spec_from_loader("broken_show_and_tell", loader=None)
    broken = importlib.util.module_from_spec(spec)
    exec(variant.apply((ROOT / "solutions" / "show_and_tell.py").read_text()), broken.__dict__)
    torch.manual_seed(0)
    assert not step_agrees_with_forward(broken.ShowTellRNN(), features, captions)

    assert known_causes({"step_agrees_with_forward": True, "losses": [2.0, 1.2]}) == []
    causes = known_causes({"step_agrees_with_forward": False, "losses": [2.0, 1.99]})
    assert len(causes) == 2 and "disagrees with your forward" in causes[0] and "did not fall" in causes[1]
    assert "first epoch 2.000, last 1.990" in causes[1]
    # what a hidden check shows carries none of the numbers the worker sent
    unshaped = known_causes(
        {"step_agrees_with_forward": False, "losses": [4503599627450913.0, 4503599627370496.0]}, figures=False
    )
    assert unshaped[1] == "the training loss did not fall: no learning signal reaches the parameters", unshaped
    assert known_causes({"step_agrees_with_forward": None, "losses": "x"}) == []
