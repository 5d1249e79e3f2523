"""Toy models used by both sides of the sandbox: the grader computes expected values with them, the
worker runs student code on them. Built only from plain data (a table of log-probabilities)."""

from __future__ import annotations

import itertools

import torch

from shared.vocab import END, PAD, START

MEMORY = 3  # the model remembers the sum of the tokens it emitted, modulo MEMORY


def toy_table(seed: int, contexts: int, steps: int, vocab: int, end_bias: float = 0.0) -> torch.Tensor:
    """Log-probabilities (contexts, steps, MEMORY, vocab, vocab) of the next token given the memory and the
    previous token, at each step, for each context; PAD and START are never emitted."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(contexts, steps, MEMORY, vocab, vocab, generator=g, dtype=torch.float64) * 2
    logits[..., END] += end_bias
    logits[..., PAD] = float("-inf")
    logits[..., START] = float("-inf")
    return torch.log_softmax(logits, -1)


class ToyModel:
    """A decoding-protocol model over a fixed table: row n of the batch uses context contexts[n].

    State: (memory (N, 1) float, t (N,) step counter, context (N,)). The memory (sum of emitted tokens mod
    MEMORY) makes the next distribution depend on the whole history, so a decoder that hands a beam the
    wrong parent's state is caught. The float tensor comes first, as in real models.
    """

    def __init__(self, table: torch.Tensor):
        self.table = table
        self.steps = table.shape[1]

    def init_state(self, contexts: torch.Tensor):
        contexts = contexts.long()
        n = contexts.shape[0]
        return (torch.zeros(n, 1, dtype=self.table.dtype), torch.zeros(n, dtype=torch.long), contexts)

    def step(self, tokens: torch.Tensor, state):
        memory, t, ctx = state
        emitted = torch.where(t > 0, tokens, torch.zeros_like(tokens))  # START is not an emitted token
        memory = (memory + emitted.unsqueeze(1)) % MEMORY
        log_probs = self.table[ctx, t.clamp(max=self.steps - 1), memory[:, 0].long(), tokens]
        return log_probs, (memory, t + 1, ctx)


def sequence_log_prob(table: torch.Tensor, context: int, tokens: list[int]) -> float:
    """Total log-probability of a returned sequence: tokens up to and including END; PAD after END is free,
    PAD before END (or any other token there) is impossible (-inf)."""
    total, prev, memory = 0.0, START, 0
    steps = table.shape[1]
    for t, tok in enumerate(tokens):
        if prev == END:
            if tok != PAD:
                return float("-inf")
            continue
        total += table[context, min(t, steps - 1), memory, prev, tok].item()
        memory = (memory + tok) % MEMORY
        prev = tok
    return total


def ranked_sequences(table: torch.Tensor, context: int, max_len: int) -> list[tuple[float, tuple[int, ...]]]:
    """Every distinct sequence of max_len tokens (PAD after END) with its log-probability, best first."""
    vocab = table.shape[-1]
    seen: dict[tuple[int, ...], None] = {}
    for drawn in itertools.product(range(END, vocab), repeat=max_len):
        seq = list(drawn)
        if END in seq:
            i = seq.index(END)
            seq = seq[: i + 1] + [PAD] * (max_len - i - 1)
        seen[tuple(seq)] = None
    scored = [(sequence_log_prob(table, context, list(s)), s) for s in seen]
    return sorted(scored, key=lambda x: -x[0])


def greedy_sequence(table: torch.Tensor, context: int, max_len: int) -> list[int]:
    """The greedy caption of the toy model for `context`, read off the table: at each step the most probable next
    token given the memory and the previous token; PAD after END. (Ties have probability zero with toy_table.)"""
    steps = table.shape[1]
    tokens, prev, memory = [], START, 0
    for t in range(max_len):
        if prev in (END, PAD):  # finished: PAD from the step after END on
            tokens.append(PAD)
            prev = PAD
            continue
        tok = int(table[context, min(t, steps - 1), memory, prev].argmax())
        tokens.append(tok)
        memory = (memory + tok) % MEMORY
        prev = tok
    return tokens


def toy_caption_weights(seed: int, vocab: int, steps: int, grid: int) -> dict[str, torch.Tensor]:
    """The three float64 tables of a ToyCaptioner: "word" (vocab, vocab), "position" (steps, vocab) and
    "image" (grid, vocab), grid = L * D, standard normal x 2 so the log-probabilities differ visibly."""
    g = torch.Generator().manual_seed(seed)
    return {
        name: torch.randn(*shape, generator=g, dtype=torch.float64) * 2
        for name, shape in (("word", (vocab, vocab)), ("position", (steps, vocab)), ("image", (grid, vocab)))
    }


def toy_caption_logits(
    weights: dict[str, torch.Tensor], features: torch.Tensor, captions: torch.Tensor
) -> torch.Tensor:
    """Teacher-forced logits (N, T-1, V) of the toy captioner, in float64: word[previous word] + position[t] +
    (flattened features) @ image. Each pair's logits depend on its own image, its previous word and the step."""
    inputs = captions[:, :-1]
    image = features.to(torch.float64).flatten(1) @ weights["image"]
    return weights["word"][inputs] + weights["position"][: inputs.shape[1]] + image[:, None, :]


class ToyCaptioner(torch.nn.Module):
    """A teacher-forcing captioner over fixed tables (toy_caption_logits), with the forward(features, captions) ->
    logits (N, T-1, V) that caption_log_probs uses. It records the batch size of every call in `calls`, so a
    scorer that runs the model once per pair shows."""

    def __init__(self, weights: dict[str, torch.Tensor]):
        super().__init__()
        self.tables = torch.nn.ParameterDict(
            {k: torch.nn.Parameter(v.clone(), requires_grad=False) for k, v in weights.items()}
        )
        self.calls: list[int] = []

    def forward(self, features: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
        self.calls.append(int(captions.shape[0]))
        return toy_caption_logits(dict(self.tables), features, captions)
