"""Part 2 public checks: greedy decoding, beam search (the k best distinct captions where a beam is exact) and
sampling (the first word, and whole two-word captions), on toy models whose every sequence can be enumerated. Expected values come from the toy model's table (its greedy path, every sequence's log-probability)
and from the tempered distribution itself, never from the student's own output or a reference solution. Ties
between sequences have probability zero with these random tables. (The part's hidden checks run
in the grader, after the deadline.)"""

from __future__ import annotations

import math

import torch
from hypothesis import given

from autograder.public.checks import check, current_round
from autograder.public.compare import CheckFailed, expect, expect_tensor, expect_token_ids, expect_tuple
from autograder.public.strategies import PROPERTY, beam_widths, toy_cases
from autograder.public.tolerances import BEAM_SCORE, EXACT, SORTED_SCORES, TOP_SCORES
from autograder.worker.toys import MEMORY, greedy_sequence, ranked_sequences, sequence_log_prob, toy_table
from shared.vocab import END, PAD, START, VOCAB


def _toy(case):
    seed, n, steps, vocab, end_bias = case
    table = toy_table(seed, n, steps, vocab, end_bias)
    contexts = torch.arange(n)
    describe = f"toy model seed={seed}, N={n}, max_len={steps}, V={vocab}"
    return table, contexts, steps, describe


def word(token: int) -> str:
    """The vocabulary's word for a token id (shared/vocab.py: 0 <pad>, 1 <start>, 2 <end>, 3 a, ...)."""
    return VOCAB[token] if 0 <= token < len(VOCAB) else "?"


def named(token: int) -> str:
    """One token id beside its word: '2 "<end>"'."""
    return f'{token} "{word(token)}"'


def caption(tokens) -> str:
    """Token ids as words beside the ids: '"a <end> <pad>" (ids [3, 2, 0])'."""
    ids = [int(t) for t in tokens]
    return f'"{" ".join(word(t) for t in ids)}" (ids {ids})'


def _relative_to_end(got: list[int], expected: list[int], step: int) -> str:
    """Where `step` lies with respect to the END of either caption: a difference after END is about padding."""
    if END in expected[:step]:
        return f" (after END: the expected caption ended at step {expected.index(END)}, so every later token is PAD)"
    if END in got[:step]:
        return f" (after END: your caption ended at step {got.index(END)}, where the expected caption goes on)"
    return ""


def expect_captions(name: str, got, expected: torch.Tensor, describe: str) -> None:
    """`got` equals the token ids `expected` (N, T); the first caption that differs is shown as words, and a
    difference after END is named as such."""
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and got.dtype == expected.dtype:
        differ = got != expected
        if differ.any():
            row, step = (int(i) for i in differ.nonzero()[0])
            g, e = got[row].tolist(), expected[row].tolist()
            raise CheckFailed(
                f"{name}: {int(differ.sum())} of {differ.numel()} tokens differ; the first in caption "
                f"{row} at step {step}: got {named(g[step])}, expected "
                f"{named(e[step])}{_relative_to_end(g, e, step)}; got {caption(g)}, expected "
                f"{caption(e)} [{describe}]"
            )
    expect_tensor(name, got, expected, tolerance=EXACT, case=describe)


def _pad_after_end(name: str, tokens: torch.Tensor, describe: str) -> None:
    for row in tokens.reshape(-1, tokens.shape[-1]).tolist():
        if END in row:
            tail = row[row.index(END) + 1 :]
            expect(
                all(t == PAD for t in tail), f"{name}: expected PAD after the first END, got {caption(row)}", describe
            )


def _greedy(table: torch.Tensor, n: int, steps: int) -> torch.Tensor:
    """(n, steps) long: the greedy caption of every context, read off the toy model's table."""
    return torch.tensor([greedy_sequence(table, c, steps) for c in range(n)], dtype=torch.long)


@check()
def greedy_matches_argmax_decoding(student, ctx):
    """greedy_decode feeds back the argmax word and pads after END (toy models)."""

    @PROPERTY
    @given(toy_cases)
    def prop(case):
        table, contexts, steps, describe = _toy(case)
        expected = _greedy(table, len(contexts), steps)
        got = student.call("decoding.greedy_toy", table=table, contexts=contexts, max_len=steps)
        expect_captions("greedy_decode tokens", got, expected, describe)

    prop()


@check()
def beam_width_one_is_greedy(student, ctx):
    """beam_search with k = 1 returns the greedy caption and its log-probability."""

    @PROPERTY
    @given(toy_cases)
    def prop(case):
        table, contexts, steps, describe = _toy(case)
        greedy = _greedy(table, len(contexts), steps)
        tokens, scores = _beam(student, table, contexts, 1, steps, describe)
        expect_captions("beam_search(k=1) tokens[:, 0]", tokens[:, 0], greedy, describe)
        expected = torch.tensor(
            [[sequence_log_prob(table, c, greedy[c].tolist())] for c in range(len(contexts))], dtype=torch.float64
        )
        expect_tensor("beam_search(k=1) scores", scores.double(), expected, tolerance=BEAM_SCORE, case=describe)

    prop()


@check()
def beam_scores_are_sorted_log_probabilities(student, ctx):
    """Every returned beam's score is the total log-probability of its tokens, sorted best first."""

    @PROPERTY
    @given(toy_cases, beam_widths)
    def prop(case, k):
        table, contexts, steps, describe = _toy(case)
        describe += f", k={k}"
        tokens, scores = _beam(student, table, contexts, k, steps, describe)
        for n in range(len(contexts)):
            row = scores[n].double()
            expect(
                bool((row[:-1] >= row[1:] - SORTED_SCORES.atol).all()),
                f"scores of batch item {n} are not sorted best first: {row.tolist()}",
                describe,
            )
            for j in range(k):
                if math.isinf(row[j].item()):
                    continue
                recomputed = sequence_log_prob(table, n, tokens[n, j].tolist())
                expect(
                    BEAM_SCORE.accepts(row[j].item(), recomputed),
                    f"beam {j} of batch item {n}: score {row[j].item():.6f} but its tokens "
                    f"{caption(tokens[n, j].tolist())} have log-probability {recomputed:.6f}",
                    describe,
                )

    prop()
    # Every beam scored -inf ("no hypothesis") is sorted and skips the recomputation: the anchor asks for a real one.
    expect_beam_scores_its_tokens(student, "sorted scores")


def exact_beam_width(table: torch.Tensor, context: int, steps: int) -> int:
    """A beam width at which beam search is exact on a toy model: with one step any k <= the number of first
    words; with more, the number of distinct prefixes of steps - 1 tokens, so the last step expands every prefix
    and the k best sequences are the enumerated top k. Capped at 4 for one step to keep the case small."""
    if steps == 1:
        return min(4, len(ranked_sequences(table, context, 1)))
    return len(ranked_sequences(table, context, steps - 1))


@check()
def beam_search_returns_the_k_best_distinct_captions(student, ctx):
    """Where a beam of width k is exact (toy models), beam_search returns k distinct captions: the k best, best first."""

    @PROPERTY
    @given(toy_cases)
    def prop(case):
        table, contexts, steps, describe = _toy(case)
        for n in range(len(contexts)):
            ranked = ranked_sequences(table, n, steps)
            k = exact_beam_width(table, n, steps)
            where = f"{describe}, batch item {n} searched alone, k={k}"
            tokens, scores = _beam(student, table, contexts[n : n + 1], k, steps, where, table_context=n)
            captions = [tuple(row) for row in tokens[0].tolist()]
            for j in range(1, k):
                if captions[j] in captions[:j]:
                    raise CheckFailed(
                        f"two beams hold the same caption: beams {captions.index(captions[j])} and {j} "
                        f"are both {caption(captions[j])} (each returned beam must be a different "
                        f"caption) [{where}]"
                    )
            best = ranked[:k]
            expect_tensor(
                f"beam_search scores (expected the {k} best log-probabilities of all {len(ranked)} captions)",
                scores[0].double(),
                torch.tensor([s for s, _ in best], dtype=torch.float64),
                tolerance=TOP_SCORES,
                case=where,
            )
            expect(
                captions == [c for _, c in best],
                f"beam_search tokens: expected the {k} best captions "
                f"{', '.join(caption(c) for _, c in best)}, best first; got "
                f"{', '.join(caption(c) for c in captions)}",
                where,
            )

    prop()


def tempered_sequence_probs(table: torch.Tensor, context: int, temperature: float, steps: int) -> dict:
    """{caption (tuple of steps tokens, PAD after END): probability} when each word is drawn from
    softmax(log_probs / temperature) of the toy model given everything drawn before it."""
    probs = {(): 1.0}
    for t in range(steps):
        grown = {}
        for prefix, p in probs.items():
            if prefix and prefix[-1] in (END, PAD):
                grown[prefix + (PAD,)] = p
                continue
            memory = sum(prefix) % MEMORY
            previous = prefix[-1] if prefix else START
            word = torch.softmax(table[context, min(t, table.shape[1] - 1), memory, previous] / temperature, -1)
            for w, q in enumerate(word.tolist()):
                if q > 0:
                    grown[prefix + (w,)] = p * q
        probs = grown
    return probs


@check()
def sampling_follows_the_tempered_distribution_of_whole_captions(student, ctx):
    """sample_captions draws two-word captions with the probability of each word given the words drawn before it."""
    for seed, temperature in zip(_seeds((31, 32)), (1.0, 0.7)):
        table = toy_table(seed, 1, 2, 5)
        n = 6000
        drawn, _ = _sample(student, table, torch.zeros(n, dtype=torch.long), temperature, 2, seed)
        describe = f"toy model seed={seed}, temperature={temperature}, {n} samples of 2 words"
        expected = tempered_sequence_probs(table, 0, temperature, 2)
        counts = {}
        for row in drawn.tolist():
            counts[tuple(row)] = counts.get(tuple(row), 0) + 1
        unexpected = [caption(c) for c in counts if c not in expected]
        expect(not unexpected, f"drew captions of probability 0: {', '.join(unexpected[:3])}", describe)
        for drawn_caption, p in sorted(expected.items(), key=lambda item: -item[1]):
            freq = counts.get(drawn_caption, 0) / n
            # 5 standard errors of a binomial proportion, as for the first word alone.
            tolerance = 5 * math.sqrt(p * (1 - p) / n) + 1e-3
            expect(
                abs(freq - p) <= tolerance,
                f"the caption {caption(drawn_caption)} was drawn with frequency {freq:.4f}, "
                f"expected {p:.4f} +- {tolerance:.4f} (the second word's distribution depends on the first word "
                f"and on the model's state after it)",
                describe,
            )


@check()
def sampling_follows_the_tempered_distribution(student, ctx):
    """sample_captions draws the first word from softmax(log_probs / temperature)."""
    for seed, temperature in zip(_seeds((11, 12, 13)), (1.0, 0.5, 2.0)):
        table = toy_table(seed, 1, 1, 6)
        n = 6000
        first, _ = _sample(student, table, torch.zeros(n, dtype=torch.long), temperature, 1, seed)
        describe = f"toy model seed={seed}, temperature={temperature}, {n} samples"
        probs = torch.softmax(table[0, 0, 0, 1] / temperature, -1)
        freq = torch.bincount(first[:, 0].long(), minlength=6).double() / n
        # 5 standard errors of a binomial proportion: a correct sampler fails this with probability ~1e-6.
        tolerance = 5 * torch.sqrt(probs * (1 - probs) / n) + 1e-3
        worst = int(((freq - probs).abs() - tolerance).argmax())
        expect(
            bool(((freq - probs).abs() <= tolerance).all()),
            f"token {named(worst)} drawn as the first word with frequency {freq[worst]:.4f}, expected {probs[worst]:.4f} +- "
            f"{tolerance[worst]:.4f}",
            describe,
        )


@check()
def sampling_is_reproducible_and_pads_after_end(student, ctx):
    """The same generator state gives the same captions, with PAD after END."""
    for seed in _seeds((21, 22)):
        table = toy_table(seed, 3, 4, 6, end_bias=1.0)
        contexts = torch.arange(3).repeat(50)
        describe = f"toy model seed={seed}, N=150, max_len=4"
        first, again = _sample(student, table, contexts, 1.0, 4, seed)
        expect_captions("sample_captions with the same generator state", again, first, describe)
        _pad_after_end("sample_captions", first, describe)
    expect_samples_vary(student, "reproducible sampling")


# -- helpers --------------------------------------------------------------------------------------

# The anchors of the properties that a decoder computing nothing satisfies (reproducible sampling, batch items
# searched alone, inputs left unchanged), on one fixed toy model: a sampler draws more than one first word, a beam's
# score is the log-probability of its tokens, and greedy's first word is the table's argmax.
ANCHOR_TOY = (41, 3, 3, 6, 0.0)  # toy_cases' (seed, N, max_len, V, END bias)


def expect_samples_vary(student, what: str) -> None:
    table, _, steps, describe = _toy(ANCHOR_TOY)
    contexts = torch.arange(table.shape[0]).repeat(50)
    describe = f"the anchor of {what}: {describe.replace('N=3', f'N={len(contexts)}')}, temperature 1, generator seed 7"
    first, _ = _sample(student, table, contexts, 1.0, steps, 7)
    words = sorted(set(first[:, 0].tolist()))
    expect(
        len(words) > 1,
        f"your samples do not vary: all {len(contexts)} captions start with {named(words[0])}, "
        f"although the three contexts' most probable first words are not all the same",
        describe,
    )


def expect_beam_scores_its_tokens(student, what: str) -> None:
    table, contexts, steps, describe = _toy(ANCHOR_TOY)
    describe = f"the anchor of {what}: {describe}, k=2"
    tokens, scores = _beam(student, table, contexts, 2, steps, describe)
    for n in range(len(contexts)):
        recomputed = sequence_log_prob(table, n, tokens[n, 0].tolist())
        got = float(scores[n, 0])
        expect(
            BEAM_SCORE.accepts(got, recomputed),
            f"your beam search does not score its "
            f"captions: the best beam of batch item {n} scores {got:.6f} but its tokens "
            f"{caption(tokens[n, 0].tolist())} have log-probability {recomputed:.6f}",
            describe,
        )


def expect_greedy_starts_with_the_argmax(student, what: str) -> None:
    table, contexts, steps, describe = _toy(ANCHOR_TOY)
    describe = f"the anchor of {what}: {describe}"
    got = student.call("decoding.greedy_toy", table=table, contexts=contexts, max_len=steps)
    expect(
        isinstance(got, torch.Tensor) and tuple(got.shape) == (len(contexts), steps),
        f"greedy_decode: expected a tensor of shape {(len(contexts), steps)}",
        describe,
    )
    expected = _greedy(table, len(contexts), steps)[:, 0]
    expect(
        bool((got[:, 0] == expected).all()),
        f"your greedy decoding does not follow the model: its first words "
        f"are {[named(int(t)) for t in got[:, 0]]}, the most probable first words {[named(int(t)) for t in expected]}",
        describe,
    )


def _seeds(public: tuple[int, ...]) -> tuple[int, ...]:
    """The seeds of a check with fixed cases: `public` in the public round, as many of the grader's own in its
    round (autograder.public.checks.Round)."""
    now = current_round()
    return public if now.public else tuple((now.seed + 1000 * i) % 2**31 for i in range(len(public)))


def _beam(student, table, contexts, k, steps, describe, table_context=None):
    if table_context is not None:  # search one context alone: a one-context table keeps the model identical
        table = table[table_context : table_context + 1]
        contexts = torch.zeros(1, dtype=torch.long)
    out = student.call("decoding.beam_toy", table=table, contexts=contexts, k=k, max_len=steps)
    tokens, scores = expect_tuple("beam_search result (tokens, scores)", out, 2, describe, exact=True)
    n = len(contexts)
    if not isinstance(tokens, torch.Tensor) or tuple(tokens.shape) != (n, k, steps):
        raise CheckFailed(
            f"beam_search tokens: expected a tensor of shape {(n, k, steps)}, got "
            f"{tuple(tokens.shape) if isinstance(tokens, torch.Tensor) else type(tokens).__name__} [{describe}]"
        )
    if not isinstance(scores, torch.Tensor) or tuple(scores.shape) != (n, k):
        raise CheckFailed(
            f"beam_search scores: expected a tensor of shape {(n, k)}, got "
            f"{tuple(scores.shape) if isinstance(scores, torch.Tensor) else type(scores).__name__} [{describe}]"
        )
    expect(tokens.dtype == torch.long, f"beam_search tokens: expected dtype torch.int64, got {tokens.dtype}", describe)
    return tokens, scores


def _sample(student, table, contexts, temperature, steps, seed):
    out = student.call(
        "decoding.sample_toy",
        table=table,
        contexts=contexts,
        temperature=temperature,
        max_len=steps,
        generator_seed=seed,
    )
    first, again = expect_tuple("sample_captions results", out, 2)
    expect(
        isinstance(first, torch.Tensor) and tuple(first.shape) == (len(contexts), steps),
        f"sample_captions: expected a tensor of shape {(len(contexts), steps)}",
    )
    expect_token_ids("sample_captions", first, table.shape[-1])
    return first, again
