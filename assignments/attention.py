"""Part 4: soft attention over the annotation grid (Show, Attend and Tell; Xu et al. 2015).

The encoder keeps its spatial grid: L = 8 x 8 annotation vectors v_1 .. v_L of width D, one per image
cell. At every step the decoder scores each location from its previous hidden state, turns the
scores into a distribution over the L locations, and reads the weighted average of the annotations:

    q = W_q h_{t-1},   k_i = W_k v_i,   alpha_t = softmax_i(k_i . q / sqrt(K)),   z_t = sum_i alpha_ti v_i

The LSTM cell then consumes [embedding of the previous word, z_t]. Because z_t is a differentiable
function of alpha_t, the whole model trains by ordinary backpropagation on the teacher-forcing loss.

A weighted average forgets where it looked: our small encoder's vectors say what is in a cell, not
where the cell is. with_coords appends each cell's normalised (row, col) to its annotation vector
(the CoordConv trick), which is what lets the model say "above" or "left of".

You write four things, step -> features -> model:
  1. attend: one scaled dot-product attention step (checked against F.scaled_dot_product_attention).
  2. with_coords: the coordinate channels.
  3. AttnCaptioner.attention_step, forward and step: the decoder around attend.
The model's parameters, init_state and advance (the LSTM update after attending) are given; Part 5
trains the same model with hard attention using only init_state, attention_step and advance.
Parity with F.scaled_dot_product_attention: your functions may not call it, and a module that names it or looks names up at run time earns no
credit from the checks against it (the handout's README, "Checked against PyTorch's own ops", lists what counts).
"""
# Generated from the reference attention.py by `python -m instructor stubs`; do not edit by hand.
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from shared.encoder import D_ANN
from shared.vocab import VOCAB_SIZE


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of scaled dot-product attention with a single query per row.

    Args:
        query: (N, d) one query per example.
        keys: (N, L, d) one key per location.
        values: (N, L, D) one value (annotation vector) per location.

    Returns:
        context: (N, D) = sum_i weights[:, i] * values[:, i].
        weights: (N, L) = softmax over L of (keys . query) / sqrt(d); each row sums to 1.

    Parity: F.scaled_dot_product_attention(query.unsqueeze(1), keys, values).squeeze(1) gives the
    same context (do not call it here).
    """
    if query.dim() != 2 or keys.dim() != 3 or values.dim() != 3:
        raise ValueError(f"attend: expected query (N, d), keys (N, L, d), values (N, L, D), got "
                         f"{tuple(query.shape)}, {tuple(keys.shape)}, {tuple(values.shape)}")
    if keys.shape[0] != query.shape[0] or keys.shape[2] != query.shape[1] or values.shape[:2] != keys.shape[:2]:
        raise ValueError(f"keys: expected shape ({query.shape[0]}, L, {query.shape[1]}) matching query and values "
                         f"(N, L, D), got keys {tuple(keys.shape)}, query {tuple(query.shape)}, "
                         f"values {tuple(values.shape)}")
    # TODO (Part 4): implement attend
    raise NotImplementedError("Part 4 (attention): attend is not implemented yet")


def with_coords(features: torch.Tensor, grid: int) -> torch.Tensor:
    """Append each cell's normalised (row, col) to its annotation vector.

    Args:
        features: (N, L, D) annotation vectors of a grid x grid feature map, row-major
            (location l is row l // grid, column l % grid).
        grid: side of the grid; L must equal grid * grid.

    Returns:
        (N, L, D + 2): features, then row and column, each ((index + 0.5) / grid) * 2 - 1, so cell
        centres lie in (-1, 1): for grid = 8 the top-left cell gets (-0.875, -0.875). Same dtype and
        device as features; features is not modified.
    """
    if not isinstance(grid, int) or grid < 1:
        raise ValueError(f"grid: expected a positive int, got {grid!r}")
    if features.dim() != 3 or features.shape[1] != grid * grid:
        raise ValueError(f"features: expected shape (N, L={grid * grid}, D) for grid={grid}, "
                         f"got {tuple(features.shape)}")
    # TODO (Part 4): implement with_coords
    raise NotImplementedError("Part 4 (attention): with_coords is not implemented yet")


class AttnCaptioner(nn.Module):
    """Show, Attend and Tell decoder on a cached annotation grid (soft attention).

    Parameters (given):
        emb: Embedding(V, E).     init_h, init_c: Linear(D, H), the initial state from the mean annotation.
        Wk: Linear(D, K), keys.   Wq: Linear(H, K), the query from the hidden state.
        cell: LSTMCell(E + D, H), input [word embedding, context].     out: Linear(H, V).
    State: a tuple (h (N, H), c (N, H), features (N, L, D), keys (N, L, K)); the keys are computed
    once per image, in init_state.
    """

    def __init__(self, n_vocab: int = VOCAB_SIZE, D: int = D_ANN + 2, E: int = 32, H: int = 96, K: int = 32):
        super().__init__()
        self.emb = nn.Embedding(n_vocab, E)
        self.init_h = nn.Linear(D, H)
        self.init_c = nn.Linear(D, H)
        self.Wk = nn.Linear(D, K)
        self.Wq = nn.Linear(H, K)
        self.cell = nn.LSTMCell(E + D, H)
        self.out = nn.Linear(H, n_vocab)
        self.D = D

    def init_state(self, features: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """State before the first word.

        Args:
            features: (N, L, D) annotation grids (D as in the constructor, coordinates included).
        Returns:
            (h, c, features, keys): h = tanh(init_h(mean annotation)), c = tanh(init_c(mean annotation)),
            each (N, H); features unchanged; keys = Wk(features), (N, L, K).
        """
        if features.dim() != 3 or features.shape[-1] != self.D:
            raise ValueError(f"features: expected shape (N, L, {self.D}), got {tuple(features.shape)}")
        mean = features.mean(1)
        return torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean)), features, self.Wk(features)

    def advance(self, tokens: torch.Tensor, context: torch.Tensor, state: tuple[torch.Tensor, ...]):
        """Run the LSTM cell on [emb(tokens), context] after attending.

        Args:
            tokens: (N,) long, the current input words.
            context: (N, D) the context read at this step (soft: the weighted average).
            state: (h, c, features, keys).
        Returns:
            logits: (N, V) = out(h_new), scores for the next word.
            state: (h_new, c_new, features, keys).
        """
        h, c, features, keys = state
        h, c = self.cell(torch.cat([self.emb(tokens), context], -1), (h, c))
        return self.out(h), (h, c, features, keys)

    def attention_step(self, state: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor]:
        """Where to look next, decided from the previous hidden state.

        Args:
            state: (h (N, H), c, features (N, L, D), keys (N, L, K)).
        Returns:
            context: (N, D) the expected annotation under the weights.
            weights: (N, L) the attention distribution, from attend(Wq(h), keys, features).
        """
        # TODO (Part 4): implement AttnCaptioner.attention_step
        raise NotImplementedError("Part 4 (attention): AttnCaptioner.attention_step is not implemented yet")

    def forward(self, features: torch.Tensor, captions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing: at each step attend, then advance on the ground-truth word.

        Args:
            features: (N, L, D) annotation grids.
            captions: (N, T) long; the inputs are captions[:, :-1].
        Returns:
            logits: (N, T-1, V); logits[:, t] scores the word after captions[:, t].
            weights: (N, T-1, L); weights[:, t] is the attention map used for that word.
        """
        # TODO (Part 4): implement AttnCaptioner.forward
        raise NotImplementedError("Part 4 (attention): AttnCaptioner.forward is not implemented yet")

    def step(self, tokens: torch.Tensor, state: tuple[torch.Tensor, ...]):
        """One decoding step (the decoding protocol).

        Args:
            tokens: (N,) long, the current input words.
            state: (h, c, features, keys), from init_state or a previous step.
        Returns:
            log_probs: (N, V) log-softmax over the next word.
            state: the new state.
        Fed the same tokens, successive steps reproduce forward's logits (after a log-softmax).
        """
        # TODO (Part 4): implement AttnCaptioner.step
        raise NotImplementedError("Part 4 (attention): AttnCaptioner.step is not implemented yet")


def soft_attention_loss(model: nn.Module, features: torch.Tensor, captions: torch.Tensor, loss_fn) -> torch.Tensor:
    """Teacher-forcing loss of a soft-attention captioner (given).

    Args:
        model: an AttnCaptioner.
        features: (N, L, D) annotation grids.
        captions: (N, T) long.
        loss_fn: caption_loss(logits (N, T-1, V), captions (N, T)) -> scalar (Part 1's, passed in).
    Returns:
        The scalar loss_fn(model(features, captions)[0], captions).
    Train with shared.training.train(model, lambda m, idx: soft_attention_loss(m, grids[idx], tokens[idx],
    caption_loss), n, epochs, batch_size, lr, seed).
    """
    return loss_fn(model(features, captions)[0], captions)
