"""Part 2 hidden checks: beam search against exhaustive search on toy models, batch items searched alone, and
decoders that leave their inputs alone. (The public checks and the helpers both use:
autograder/public/checks/decoding.py.)"""

from __future__ import annotations

import torch
from hypothesis import given

from autograder.grader.strategies import batched_beam_widths
from autograder.grader.tolerances import BATCHED_BEAMS
from autograder.public.checks import check
from autograder.public.checks.decoding import (
    _beam,
    _toy,
    expect_beam_scores_its_tokens,
    expect_greedy_starts_with_the_argmax,
    expect_samples_vary,
)
from autograder.public.compare import expect_tensor, expect_tuple
from autograder.public.strategies import FEW, toy_cases
from autograder.public.tolerances import EXACT, TOP_SCORES
from autograder.worker.toys import ranked_sequences, toy_table


@check()
def wide_beam_is_exhaustive_search(student, ctx):
    """A beam at least as wide as the number of sequences returns every sequence, best first; extra rows score -inf."""

    @FEW
    @given(toy_cases)
    def prop(case):
        table, contexts, steps, describe = _toy(case)
        for n in range(len(contexts)):
            ranked = ranked_sequences(table, n, steps)
            k = len(ranked) + 2
            tokens, scores = _beam(
                student, table, contexts[n : n + 1], k, steps, describe + f", k={k}", table_context=n
            )
            expected = torch.tensor([[s for s, _ in ranked] + [float("-inf")] * 2], dtype=torch.float64)
            expect_tensor(
                f"beam_search scores (batch item {n}, k={k})",
                scores.double(),
                expected,
                tolerance=TOP_SCORES,
                case=describe,
            )

    prop()


@check()
def beam_batch_items_are_independent(student, ctx):
    """Beam search on a batch gives each item the same beams as searching it alone."""

    @FEW
    @given(toy_cases, batched_beam_widths)
    def prop(case, k):
        table, contexts, steps, describe = _toy(case)
        describe += f", k={k}"
        tokens, scores = _beam(student, table, contexts, k, steps, describe)
        for n in range(len(contexts)):
            alone_tokens, alone_scores = _beam(student, table, contexts[n : n + 1], k, steps, describe, table_context=n)
            expect_tensor(
                f"scores of batch item {n} (batched vs alone)",
                scores[n : n + 1].double(),
                alone_scores.double(),
                tolerance=BATCHED_BEAMS,
                case=describe,
            )

    prop()
    expect_beam_scores_its_tokens(student, "batch items searched alone")


@check()
def decoders_leave_their_inputs_unchanged(student, ctx):
    """greedy_decode, beam_search and sample_captions do not modify the state they are given."""
    table = toy_table(31, 2, 3, 5)
    before, after = expect_tuple(
        "result", student.call("decoding.inputs_unchanged", table=table, contexts=torch.arange(2), k=2, max_len=3), 2
    )
    for i, (b, a) in enumerate(zip(before, after)):
        expect_tensor(f"state[{i}] after decoding", a, b, tolerance=EXACT)
    # A state left alone by decoders that compute nothing means nothing: each decoder must follow the model.
    expect_greedy_starts_with_the_argmax(student, "inputs left unchanged")
    expect_beam_scores_its_tokens(student, "inputs left unchanged")
    expect_samples_vary(student, "inputs left unchanged")
