"""Part 7: StyleNet's factored LSTM (Gan et al., CVPR 2017).

Styled captions paired with images are rare; styled text is plentiful. StyleNet factors the LSTM's
input-to-hidden matrix of all four gates into three,

    W_x = U S_style V,        U (4H, rank), S_style (rank, rank), V (rank, E),

where U and V are shared by every style and learnt from factual image-caption pairs, and the small
middle factor S is style-specific: S_romantic is learnt from unpaired romantic text alone, as a
language model. At test time, swapping S changes the style and nothing else.

Training alternates two kinds of batch (train_stylenet, given):
  - a factual batch (image, caption) updates everything except S_romantic;
  - a styled batch (text only) updates S_romantic and the embedding and output rows of the
    style-only words (shared.vocab.STYLE_IDS), nothing else. Its initial state is the mean image
    state of the factual batch, so both kinds of batch run in the same regime.

You write three things, cell -> styled update:
  1. FactoredLSTMCell.input_weight: U S V for a style, or for a mixture of the two factors.
  2. FactoredLSTMCell.forward: one LSTM step with that input matrix (checked against nn.LSTMCell).
  3. styled_text_step: one styled-text update that leaves every other parameter bit-for-bit unchanged.
Parity with nn.LSTMCell: your functions may not call it, and a module that names it or looks names up at run time earns no
credit from the checks against it (the handout's README, "Checked against PyTorch's own ops", lists what counts).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from shared.captions import romantic
from shared.encoder import D_ANN, L_GRID
from shared.metrics import style_scores
from shared.scenes import make_scenes
from shared.training import make_adam, seed_everything
from shared.vocab import PAD, STYLE_IDS, VOCAB_SIZE, decode_batch, encode_batch

T_STYLE = 12  # <start> + up to 10 words + <end>: room for the two style words
STYLES = ("factual", "romantic")


class FactoredLSTMCell(nn.Module):
    """An LSTM cell whose input-to-hidden matrix is W_x = U S V, with one S per style.

    Parameters (given):
        U: (4H, rank) and V: (rank, E), shared by every style.
        S: nn.ParameterDict of (rank, rank) factors, one per style, each initialised to eye + 0.01 randn.
        W_h: Linear(H, 4H), the hidden-to-hidden weights and their bias.
        b: (4H,) input bias; its forget-gate slice b[H:2H] starts at +2 (the forget gate starts open).
    Attributes:
        style: the style forward() uses (default "factual").
        mix: None, or a float lam: forward() then uses S = (1 - lam) S_factual + lam S_romantic.
    Gate order is i, f, g, o, as in nn.LSTMCell.
    """

    def __init__(self, E: int, H: int, rank: int, styles: tuple[str, ...] = STYLES):
        super().__init__()
        self.E, self.H, self.rank = E, H, rank
        self.U = nn.Parameter(torch.randn(4 * H, rank) / math.sqrt(rank))
        self.V = nn.Parameter(torch.randn(rank, E) / math.sqrt(E))
        self.S = nn.ParameterDict({s: nn.Parameter(torch.eye(rank) + 0.01 * torch.randn(rank, rank)) for s in styles})
        self.W_h = nn.Linear(H, 4 * H)
        self.b = nn.Parameter(torch.zeros(4 * H))
        with torch.no_grad():
            self.b[H:2 * H].fill_(2.0)
        self.style: str = "factual"
        self.mix: float | None = None

    def check_style(self, style: str) -> None:
        """Raise ValueError unless this cell has a factor S[style]."""
        if style not in self.S:
            raise ValueError(f"style: expected one of {tuple(self.S.keys())}, got {style!r}")

    def resolve(self, style: str | None = None, mix: float | None = None) -> tuple[str, float | None]:
        """The (style, mix) that input_weight(style, mix) uses.

        Arguments override the cell's attributes: when both are None the cell's own (self.style,
        self.mix) are used; otherwise the arguments are used as given (a None style then means
        "factual"). Raises ValueError for an unknown style, or a mix on a cell without both the
        "factual" and "romantic" factors.
        """
        if style is None and mix is None:
            style, mix = self.style, self.mix
        style = "factual" if style is None else style
        self.check_style(style)
        if mix is not None:
            self.check_style("factual")
            self.check_style("romantic")
        return style, mix

    def input_weight(self, style: str | None = None, mix: float | None = None) -> torch.Tensor:
        """The input-to-hidden matrix W_x = U S V of all four gates.

        Args:
            style: the factor to use, a key of self.S.
            mix: None, or lam (float): use S = (1 - lam) S["factual"] + lam S["romantic"]; a mix that is
                not None wins over the style.
            With both None (the default) the cell's own self.style and self.mix are used; see resolve().
        Returns:
            W_x: (4H, E) = U @ S @ V.
        """
        style, mix = self.resolve(style, mix)
        ### BEGIN SOLUTION
        if mix is not None:
            S = (1 - mix) * self.S["factual"] + mix * self.S["romantic"]
        else:
            S = self.S[style]
        return self.U @ S @ self.V
        ### END SOLUTION

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """One LSTM step under the cell's style and mix.

        Args:
            x: (N, E) inputs.
            state: (h (N, H), c (N, H)).
        Returns:
            (h, c), each (N, H): with gates i, f, g, o = chunks of x W_x^T + W_h(h) + b (in that order),
            c = sigmoid(f) * c + sigmoid(i) * tanh(g) and h = sigmoid(o) * tanh(c).
        Parity: nn.LSTMCell with weight_ih = input_weight(), weight_hh = W_h.weight, bias_ih = b and
        bias_hh = W_h.bias.
        """
        ### BEGIN SOLUTION
        h, c = state
        gates = x @ self.input_weight().T + self.W_h(h) + self.b
        i, f, g, o = gates.chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c
        ### END SOLUTION


class StyleNet(nn.Module):
    """The StyleNet captioner (given): the image enters as the initial state of a factored LSTM.

    Parameters:
        fc: Linear(D * L, DV), flattened grid -> image vector v = relu(fc(grid)).
        emb: Embedding(V, E).      out: Linear(H, V).
        init_h, init_c: Linear(DV, H); h0 = tanh(init_h(v)) and c0 = init_c(v), left unsquashed so that
            the cell state can carry the image.
        cell: FactoredLSTMCell(E, H, rank).
    State: a tuple (h (N, H), c (N, H)).
    """

    def __init__(self, n_vocab: int = VOCAB_SIZE, D: int = D_ANN, L: int = L_GRID, E: int = 48, H: int = 96,
                 DV: int = 64, rank: int = 32):
        super().__init__()
        self.fc = nn.Linear(D * L, DV)
        self.emb = nn.Embedding(n_vocab, E)
        self.init_h = nn.Linear(DV, H)
        self.init_c = nn.Linear(DV, H)
        self.cell = FactoredLSTMCell(E, H, rank)
        self.out = nn.Linear(H, n_vocab)
        self.H = H

    def init_state(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """features (N, L, D) -> (h0, c0), each (N, H)."""
        v = torch.relu(self.fc(features.flatten(1)))
        return torch.tanh(self.init_h(v)), self.init_c(v)

    def step(self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        """tokens (N,) long -> (log_probs (N, V), (h, c)), under the cell's current style."""
        h, c = self.cell(self.emb(tokens), state)
        return F.log_softmax(self.out(h), -1), (h, c)

    def forward(self, captions: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """Teacher forcing from a given initial state.

        Args:
            captions: (N, T) long; the inputs are captions[:, :-1].
            state: (h0, c0), each (N, H): init_state(features) for paired data, any state for text alone.
        Returns:
            logits: (N, T-1, V); logits[:, t] scores the word after captions[:, t].
        """
        x = self.emb(captions[:, :-1])
        hs = []
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            hs.append(state[0])
        return self.out(torch.stack(hs, 1))

    def set_style(self, style: str | None = None, mix: float | None = None) -> None:
        """Select the factor every later call uses: style None means "factual"; mix as in the cell."""
        style = "factual" if style is None else style
        self.cell.resolve(style, mix)  # raises ValueError for an unknown style
        self.cell.style, self.cell.mix = style, mix


def style_row_mask(n_vocab: int, device: torch.device | str | None = None) -> torch.Tensor:
    """BoolTensor (n_vocab,): True at the style-only words (shared.vocab.STYLE_IDS)."""
    mask = torch.zeros(n_vocab, dtype=torch.bool, device=device)
    mask[list(STYLE_IDS)] = True
    return mask


def styled_text_step(model: StyleNet, captions: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor],
                     optimizer: torch.optim.Optimizer,
                     loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None) -> float:
    """One unpaired styled-text update: a language-model step under the romantic factor.

    Args:
        model: a StyleNet.
        captions: (N, T) long romantic captions (text only, no images).
        state: (h0, c0), each (N, H): the initial state to run the captions from.
        optimizer: any torch optimizer; it may hold any of the model's parameters, with any momentum
            or weight decay.
        loss_fn: loss_fn(logits (N, T-1, V), captions (N, T)) -> scalar; None means the teacher-forcing
            loss of Part 1 (mean cross-entropy over non-PAD targets), which you write here too.
    Returns:
        The loss (a float), computed before the update.

    The update may change only S["romantic"], the rows STYLE_IDS of emb.weight and out.weight, and the
    entries STYLE_IDS of out.bias. Every other parameter must be bit-for-bit unchanged afterwards,
    whatever the optimizer does. Do both of these:
      1. mask the gradients: zero on every row and entry that must not move, and None on every other
         parameter, so that plain gradient descent (and any optimizer's statistics) leaves them alone;
      2. masking alone cannot stop momentum, weight decay or an optimizer that ignores gradients from
         moving a parameter, so snapshot everything that must not move before optimizer.step() and
         copy it back after it.
    The model runs under the romantic factor (mix None) during the step; the model's previous style
    and mix are restored before returning. Every parameter's .grad is overwritten.
    """
    ### BEGIN SOLUTION
    rows = style_row_mask(model.out.out_features, model.out.weight.device)
    row_masks = {"emb.weight": rows.unsqueeze(1), "out.weight": rows.unsqueeze(1), "out.bias": rows}
    others = [(name, p) for name, p in model.named_parameters() if name != "cell.S.romantic"]
    snapshot = [p.detach().clone() for _, p in others]

    previous = (model.cell.style, model.cell.mix)
    model.set_style("romantic")
    logits = model(captions, state)
    if loss_fn is None:
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), captions[:, 1:].reshape(-1), ignore_index=PAD)
    else:
        loss = loss_fn(logits, captions)
    model.set_style(*previous)
    model.zero_grad(set_to_none=True)
    loss.backward()

    for name, p in others:  # 1. mask the gradients
        if name in row_masks and p.grad is not None:
            p.grad.mul_(row_masks[name])
        else:
            p.grad = None
    optimizer.step()
    with torch.no_grad():  # 2. undo whatever the optimizer still did to the rest
        for (name, p), saved in zip(others, snapshot):
            if name in row_masks:
                p.copy_(torch.where(row_masks[name], p, saved))
            else:
                p.copy_(saved)
    return loss.item()
    ### END SOLUTION


def styled_corpus(n: int = 3000, seed: int = 7, length: int = T_STYLE) -> torch.Tensor:
    """The unpaired romantic corpus: the romantic rewrite of the targets of n fresh scenes.

    The scenes come from their own seed (disjoint from the training and test scenes) and their images
    are thrown away. Returns LongTensor (n, length) of encoded captions, e.g.
    "the blue circle sits happily above the yellow circle".
    """
    scenes = make_scenes(n, seed)
    return encode_batch([romantic(c) for c in scenes.targets], length)


@dataclass
class StyleHistory:
    """Per epoch: mean factual loss (per caption) and mean styled loss (per batch); seconds taken."""
    factual_losses: list[float] = field(default_factory=list)
    styled_losses: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0


def train_stylenet(grids: torch.Tensor, captions: torch.Tensor, styled_tokens: torch.Tensor,
                   loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], epochs: int = 12,
                   lr: float = 3e-3, batch_size: int = 64, seed: int = 0,
                   styled_step: Callable = styled_text_step) -> tuple[StyleNet, StyleHistory]:
    """The lecture's alternating schedule (given).

    Args:
        grids: (N, L, D) training annotation grids.
        captions: (N, T) long factual captions of those scenes (the lecture pads them to T_STYLE; the extra
            PAD steps change nothing).
        styled_tokens: (M, T_s) long unpaired romantic captions (styled_corpus()).
        loss_fn: loss_fn(logits (N, T-1, V), captions (N, T)) -> scalar, the loss of the factual batches
            (Part 1's caption_loss).
        epochs, lr, batch_size, seed: the budget (lecture: 12 epochs, lr 3e-3, batch 64, seed 0).
        styled_step: styled_step(model, captions, state, optimizer) -> float, the styled update; it computes
            its own loss (styled_text_step's default: the same cross-entropy over non-PAD targets).
    Returns:
        (model, history): the trained StyleNet in eval mode, style "factual", on the grids' device.

    Each factual batch (style "factual") updates every parameter except S["romantic"] with one Adam;
    it is followed by one styled batch, run from the factual batch's mean initial state (no gradient),
    through styled_step with a second Adam over [S["romantic"], emb.weight, out.weight, out.bias].
    S["romantic"] starts as a copy of S["factual"]. The styled corpus is drawn in shuffled passes
    of its own, reshuffled whenever fewer than batch_size unused captions are left.
    """
    device = grids.device
    seed_everything(seed)
    model = StyleNet().to(device)
    S_romantic = model.cell.S["romantic"]
    with torch.no_grad():
        S_romantic.copy_(model.cell.S["factual"])
    opt_f = make_adam([p for p in model.parameters() if p is not S_romantic], lr)
    opt_s = make_adam([S_romantic, model.emb.weight, model.out.weight, model.out.bias], lr)

    n, n_s = grids.shape[0], styled_tokens.shape[0]
    history = StyleHistory()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    styled_perm, sp = torch.randperm(n_s, device=device), 0
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(n, device=device)
        total_f = total_s = 0.0
        k = 0
        for start in range(0, n, batch_size):
            idx = perm[start:start + batch_size]
            model.set_style("factual")  # paired factual batch: everything but S_romantic
            loss_f = loss_fn(model(captions[idx], model.init_state(grids[idx])), captions[idx])
            opt_f.zero_grad()
            loss_f.backward()
            opt_f.step()
            total_f += loss_f.item() * len(idx)

            if sp + batch_size > n_s:  # unpaired styled batch: S_romantic and the style rows
                styled_perm, sp = torch.randperm(n_s, device=device), 0
            sidx = styled_perm[sp:sp + batch_size]
            sp += batch_size
            with torch.no_grad():
                h0, c0 = model.init_state(grids[idx])
                state = (h0.mean(0, keepdim=True).expand(len(sidx), -1),
                         c0.mean(0, keepdim=True).expand(len(sidx), -1))
            total_s += styled_step(model, styled_tokens[sidx], state, opt_s)
            k += 1
        history.factual_losses.append(total_f / n)
        history.styled_losses.append(total_s / k)
    model.eval()
    model.set_style("factual")
    history.wall_seconds = time.perf_counter() - wall0
    history.cpu_seconds = time.process_time() - cpu0
    return model, history


@torch.no_grad()
def style_captions(model: StyleNet, features: torch.Tensor, decode: Callable, style: str | None = None,
                   mix: float | None = None, max_len: int = T_STYLE) -> list[str]:
    """Captions of features (N, L, D) under one factor (or mix), decoded by decode(model, state, max_len)
    -> LongTensor (N, max_len), e.g. Part 2's greedy_decode. The model's style is restored afterwards."""
    previous = (model.cell.style, model.cell.mix)
    model.set_style(style, mix)
    try:
        return decode_batch(decode(model, model.init_state(features), max_len))
    finally:
        model.set_style(*previous)


def evaluate_styles(model: StyleNet, features: torch.Tensor, references: Sequence[Sequence[str]], decode: Callable,
                    styles: tuple[str, ...] = STYLES) -> dict[str, dict]:
    """Style evaluation: {style: shared.metrics.style_scores(captions, references)} for each style, with
    captions = style_captions(model, features (N, L, D), decode, style) and references one list per scene."""
    return {s: style_scores(style_captions(model, features, decode, s), references) for s in styles}
