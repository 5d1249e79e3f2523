"""Part 6: where to inject attributes (Yao et al., ICCV 2017: LSTM-A1 to A5).

Besides the image vector I, an attribute detector gives a vector A of high-level attributes (here the
encoder's seven predicted probabilities: which colours and shapes are present). Both are available,
so where in the sequence should each go? Yao et al. enumerate five answers, all of them changes to
the LSTM's input schedule:

    variant   before the first word (t = -2, t = -1)    added to every word embedding
    LSTM      image                                      -
    A1        attributes                                 -
    A2        image, then attributes                     -
    A3        attributes, then image                     -
    A4        attributes                                 image
    A5        image                                      attributes

Only the schedule differs between the six models; everything else (the cell, its open gate biases,
the data and the training budget) is shared, so the comparison is fair.

You write two things, schedule -> model:
  1. schedule: the table above as a function of already-projected inputs.
  2. LSTMA.init_state: run the prefix through the LSTM cell from a zero state and keep the
     per-step vector for step() and forward() (both given).
"""
# Generated from the reference lstm_a.py by `python -m instructor stubs`; do not edit by hand.
from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from shared.encoder import D_ANN, L_GRID
from shared.scenes import N_ATTRIBUTES
from shared.training import History, seed_everything, train
from shared.vocab import VOCAB_SIZE

VARIANTS = ("LSTM", "A1", "A2", "A3", "A4", "A5")


def check_variant(variant: str) -> None:
    """Raise ValueError unless `variant` is one of VARIANTS."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")


def schedule(variant: str, image_input: torch.Tensor,
             attr_input: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor | None]:
    """The input schedule of one LSTM-A variant.

    Args:
        variant: one of VARIANTS ("LSTM", "A1", "A2", "A3", "A4", "A5").
        image_input: (N, E) the projected image vector, Tv(v).
        attr_input: (N, E) the projected attributes, Ta(A).

    Returns:
        prefix: list of (N, E) tensors, fed to the LSTM cell in this order before the first word:
            LSTM [image]; A1 [attr]; A2 [image, attr]; A3 [attr, image]; A4 [attr]; A5 [image].
        per_step: (N, E) tensor added to every word embedding, or None when the variant repeats
            nothing: the image for A4, the attributes for A5, None for the others.
    The tensors in the result are the inputs themselves (no copies, nothing modified).

    Raises:
        ValueError: for an unknown variant.
    """
    check_variant(variant)
    # TODO (Part 6): implement schedule
    raise NotImplementedError("Part 6 (lstm_a): schedule is not implemented yet")


class LSTMA(nn.Module):
    """Yao et al.'s LSTM-A family: one LSTM decoder, and the variant only changes the input schedule.

    Parameters (given):
        fc: Linear(D * L, DV), flattened grid -> image vector v = relu(fc(grid)).
        emb: Embedding(V, E) word embeddings.
        Tv: Linear(DV, E), the image projection.      Ta: Linear(n_attr, E), the attribute projection.
        cell: LSTMCell(E, H) whose gates start open: bias_ih is +2 on the input gate, +3 on the forget
            gate and +2 on the output gate (0 on the candidate g); bias_hh starts at zero.
        out: Linear(H, V).
    State: a tuple (h (N, H), c (N, H), per_step (N, E)), batch first; per_step is the vector added to
    every word embedding (zeros for the variants that repeat nothing).
    """

    def __init__(self, variant: str = "LSTM", n_vocab: int = VOCAB_SIZE, D: int = D_ANN, L: int = L_GRID,
                 E: int = 64, H: int = 96, n_attr: int = N_ATTRIBUTES, DV: int = 64,
                 gate_bias: tuple[float, float, float] = (2.0, 3.0, 2.0)):
        super().__init__()
        check_variant(variant)
        self.variant, self.E, self.H = variant, E, H
        self.fc = nn.Linear(D * L, DV)
        self.emb = nn.Embedding(n_vocab, E)
        self.Tv = nn.Linear(DV, E)
        self.Ta = nn.Linear(n_attr, E)
        self.cell = nn.LSTMCell(E, H)
        self.out = nn.Linear(H, n_vocab)
        with torch.no_grad():  # gate order i, f, g, o: open the input, forget and output gates
            self.cell.bias_hh.zero_()
            self.cell.bias_ih.zero_()
            self.cell.bias_ih[:H].fill_(gate_bias[0])
            self.cell.bias_ih[H:2 * H].fill_(gate_bias[1])
            self.cell.bias_ih[3 * H:].fill_(gate_bias[2])

    def image_vector(self, features: torch.Tensor) -> torch.Tensor:
        """features: (N, L, D) annotation grid -> v: (N, DV) = relu(fc(flattened grid))."""
        return torch.relu(self.fc(features.flatten(1)))

    def init_state(self, features: torch.Tensor,
                   attributes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """State before the first word: the prefix of this model's schedule, already consumed.

        Args:
            features: (N, L, D) annotation grids.
            attributes: (N, n_attr) predicted attribute probabilities.

        Returns:
            (h, c, per_step): h, c (N, H), the LSTM state after feeding every prefix input in order,
            starting from h = c = 0; per_step (N, E), the schedule's per-step vector, or zeros (N, E)
            when the variant has none.
        Build the schedule with schedule(self.variant, self.Tv(v), self.Ta(attributes)), v = image_vector.
        """
        # TODO (Part 6): implement LSTMA.init_state
        raise NotImplementedError("Part 6 (lstm_a): LSTMA.init_state is not implemented yet")

    def step(self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor, torch.Tensor]):
        """One decoding step.

        Args:
            tokens: (N,) long, the current input words.
            state: (h (N, H), c (N, H), per_step (N, E)).
        Returns:
            log_probs: (N, V) log-softmax over the next word.
            state: (h, c, per_step) after this word; per_step is passed on unchanged.
        """
        h, c, per_step = state
        h, c = self.cell(self.emb(tokens) + per_step, (h, c))
        return F.log_softmax(self.out(h), -1), (h, c, per_step)

    def forward(self, features: torch.Tensor, attributes: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
        """Teacher forcing.

        Args:
            features: (N, L, D) annotation grids.
            attributes: (N, n_attr) predicted attribute probabilities.
            captions: (N, T) long; the inputs are captions[:, :-1].
        Returns:
            logits: (N, T-1, V); logits[:, t] scores the word after captions[:, t].
        """
        h, c, per_step = self.init_state(features, attributes)
        x = self.emb(captions[:, :-1]) + per_step.unsqueeze(1)  # (N, T-1, E)
        hs = []
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], (h, c))
            hs.append(h)
        return self.out(torch.stack(hs, 1))


def train_lstm_a(variant: str, grids: torch.Tensor, attributes: torch.Tensor, captions: torch.Tensor,
                 loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], epochs: int = 8,
                 batch_size: int = 64, lr: float = 3e-3, seed: int = 0) -> tuple[LSTMA, History]:
    """The lecture's recipe for one variant (given): seed, build, then Adam on shuffled mini-batches.

    Args:
        variant: one of VARIANTS.
        grids: (N, L, D) training annotation grids.
        attributes: (N, n_attr) predicted attributes of the same scenes (not the ground truth).
        captions: (N, T) long training captions.
        loss_fn: caption_loss(logits (N, T-1, V), captions (N, T)) -> scalar, e.g. Part 1's caption_loss.
        epochs, batch_size, lr, seed: the budget (lecture: 8 epochs, batch 64, lr 3e-3, seed 0).
    Returns:
        (model, history): the trained model in eval mode on the grids' device, and its shared.training.History.
    """
    seed_everything(seed)
    model = LSTMA(variant).to(grids.device)
    history = train(model, lambda m, idx: loss_fn(m(grids[idx], attributes[idx], captions[idx]), captions[idx]),
                    grids.shape[0], epochs, batch_size, lr, seed)
    return model, history
