"""Part 1 public checks, retrieval: caption_log_probs on a toy captioner whose logits the grader computes itself
(autograder.worker.toys) and on the given ShowTellLSTM, and retrieval_scores against the student's own
caption_log_probs of every (image, caption) pair, within the calls its docstring allows."""

from __future__ import annotations

import torch
from hypothesis import example, given

from autograder.public.checks import check
from autograder.public.checks.show_and_tell.cells import F64, _randn
from autograder.public.checks.show_and_tell.loss import random_captions
from autograder.public.compare import (
    expect,
    expect_close,
    expect_float_tensor,
    expect_tensor,
    type_name,
)
from autograder.public.strategies import (
    FEW,
    extra_pad_columns,
    lstm_embedding_sizes,
    lstm_hidden_sizes,
    retrieval_cases,
    toy_caption_cases,
)
from autograder.public.tolerances import (
    EXACT,
    LOG_PROB_SLIPS,
    RNN_MODEL,
)
from autograder.worker.toys import toy_caption_logits, toy_caption_weights
from shared.vocab import END, PAD

# -- retrieval: log p(caption | image), every image against every caption, recall@k -------------------------------


def enumerated_log_probs(logits: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
    """(N,) float64, term by term: the sum over every t with captions[n, t + 1] != PAD of
    log_softmax(logits[n, t])[captions[n, t + 1]] (START given, END scored, PAD not)."""
    log_probs = logits.to(F64).log_softmax(-1)
    out = torch.zeros(captions.shape[0], dtype=F64)
    for n in range(captions.shape[0]):
        for t in range(captions.shape[1] - 1):
            y = int(captions[n, t + 1])
            if y != PAD:
                out[n] += log_probs[n, t, y]
    return out


def _log_prob_symptom(got: torch.Tensor, logits: torch.Tensor, captions: torch.Tensor) -> str:
    """The usual convention slips, each computed here: the one `got` matches, named by its symptom ('' if none)."""
    lp = logits.to(F64).log_softmax(-1)
    nxt, cur = captions[:, 1:], captions[:, :-1]
    of_next = torch.take_along_dim(lp, nxt[..., None], -1)[..., 0]
    of_current = torch.take_along_dim(lp, cur[..., None], -1)[..., 0]
    scored = nxt != PAD
    slips = {
        "PAD targets are scored too (padding after END must add nothing)": of_next.sum(1),
        "END is not scored (the caption must also predict where it stops)": (of_next * (scored & (nxt != END))).sum(1),
        "the scored words are averaged, not summed (a caption's log-probability is the sum over its words)": (
            of_next * scored
        ).sum(1)
        / scored.sum(1).clamp(min=1),
        "each word is scored by the logits of its own position instead of the position before it (START is given, "
        "the first scored word is captions[:, 1])": (of_current * (cur != PAD)).sum(1),
    }
    got = got.detach().to(F64)
    for symptom, value in slips.items():
        if got.shape == value.shape and LOG_PROB_SLIPS.allclose(got, value):
            return f" ({symptom})"
    return ""


def _toy_pairs(case, extra_steps: int = 0):
    seed, n, t, v, locs, d = case
    weights = toy_caption_weights(seed, v, t + extra_steps, locs * d)
    g = torch.Generator().manual_seed(seed + 1)
    features = _randn(g, n, locs, d)
    captions = random_captions(g, n, t, v)
    describe = (
        f"a toy captioner (logits[n, t] = word[captions[n, t]] + position[t] + flattened features[n] @ W, "
        f"V={v}), features ({n}, {locs}, {d}) float64, captions {captions.tolist()}, seed={seed}"
    )
    return weights, features, captions, describe, g


def _toy_log_probs(student, weights, features, captions):
    return student.call("show_and_tell.log_probs_on_toy", weights=weights, features=features, captions=captions)


def _expect_pair_log_probs(
    name: str, got, logits: torch.Tensor, captions: torch.Tensor, inputs: torch.dtype, case: str
) -> None:
    expected = enumerated_log_probs(logits, captions)
    got = expect_float_tensor(name, got, tuple(expected.shape), case)
    tol = RNN_MODEL.for_dtypes(inputs, got.dtype)
    if not tol.allclose(got.to(F64), expected):
        name += _log_prob_symptom(got, logits, captions)
    expect_close(name, got, expected, RNN_MODEL, inputs=inputs, case=case, same_dtype=True)  # the logits' dtype


@check()
def caption_log_probs_sums_the_scored_words(student, ctx):
    """caption_log_probs is the teacher-forced sum of log p(next word) over non-PAD targets (END scored, START not)."""

    @FEW
    @given(toy_caption_cases, lstm_hidden_sizes, lstm_embedding_sizes)
    @example((0, 2, 5, 6, 1, 2), 2, 3)
    def prop(case, hidden, e):
        weights, features, captions, describe, _ = _toy_pairs(case)
        got = _toy_log_probs(student, weights, features, captions)
        _expect_pair_log_probs(
            "caption_log_probs(model, features, captions)",
            got,
            toy_caption_logits(weights, features, captions),
            captions,
            F64,
            describe,
        )
        # The given LSTM captioner, float32: the sum must follow that model's own forward too.
        seed, n, t, v, locs, d = case
        sizes = {"n_vocab": v, "D": d, "L": locs, "E": e, "H": hidden, "DV": 3}
        out = student.call(
            "show_and_tell.log_probs_on_lstm", sizes=sizes, seed=seed, features=features.float(), captions=captions
        )
        expect(isinstance(out, dict), f"unexpected result {type_name(out)}", describe)
        lstm = (
            f"ShowTellLSTM({', '.join(f'{k}={x}' for k, x in sizes.items())}) initialised from "
            f"torch.manual_seed({seed}), features ({n}, {locs}, {d}) float32, captions {captions.tolist()}"
        )
        logits = expect_float_tensor("ShowTellLSTM forward(features, captions)", out["logits"], (n, t - 1, v), lstm)
        _expect_pair_log_probs(
            "caption_log_probs(ShowTellLSTM, features, captions)",
            out["log_probs"],
            logits,
            captions,
            torch.float32,
            lstm,
        )

    prop()


@check()
def caption_log_probs_ignores_padding_and_reads_each_pairs_image(student, ctx):
    """Appended PAD columns change nothing; reordering the pairs reorders the scores; a new image changes its score."""

    @FEW
    @given(toy_caption_cases, extra_pad_columns)
    @example((0, 3, 4, 6, 1, 2), 2)
    def prop(case, extra):
        weights, features, captions, describe, g = _toy_pairs(case, extra_steps=extra)
        n = captions.shape[0]
        base = expect_float_tensor(
            "caption_log_probs(model, features, captions)",
            _toy_log_probs(student, weights, features, captions),
            (n,),
            describe,
        )
        tol = RNN_MODEL.for_dtypes(F64, base.dtype)

        def same(label: str, got, expected: torch.Tensor) -> None:
            got = expect_float_tensor(label, got, (n,), describe)
            expect_tensor(label, got, expected, tolerance=tol, case=describe, check_dtype=False)

        longer = torch.cat([captions, torch.full((n, extra), PAD, dtype=torch.long)], 1)
        same(
            f"caption_log_probs with {extra} all-PAD column(s) appended to captions (expected: the scores without "
            "them)",
            _toy_log_probs(student, weights, features, longer),
            base,
        )
        flip = torch.arange(n - 1, -1, -1)
        same(
            "caption_log_probs with the pairs in reverse order (expected: the same scores, reversed: each pair is "
            "scored on its own image and caption)",
            _toy_log_probs(student, weights, features[flip], captions[flip]),
            base[flip],
        )
        other = features.clone()
        other[0] = _randn(g, *features.shape[1:])
        same(
            "caption_log_probs with only the first pair's image replaced (expected: that pair's score changes as "
            "the model's log-probabilities say, the others stay)",
            _toy_log_probs(student, weights, other, captions),
            enumerated_log_probs(toy_caption_logits(weights, other, captions), captions),
        )

    prop()


@check()
def retrieval_scores_pair_every_image_with_every_caption(student, ctx):
    """retrieval_scores[i, j] is your caption_log_probs of image i with caption j; 200 x 200 pairs in at most 1,000 calls."""

    @FEW
    @given(retrieval_cases)
    @example((0, 3, 2, 4, 5, 2))
    @example((1, 2, 1, 4, 4, 1))  # one caption, batch_size 1: one pair per call is what the batch size asks
    def prop(case):
        _retrieval_property(student, case, locs=2, d=2)

    prop()
    expect_retrieval_scores_the_model(student)
    expect_the_graded_size_in_few_calls(student)


def expect_retrieval_scores_the_model(student) -> None:
    """The anchor of the pairing: on one small case, retrieval_scores[i, j] is the model's own log p(caption j | image
    i). The property compares retrieval_scores with the student's caption_log_probs, which a pair of constants (or
    any two functions that agree) satisfies without scoring anything."""
    n_images, n_captions, t, v = 2, 3, 4, 5
    weights = toy_caption_weights(3, v, t, 4)
    g = torch.Generator().manual_seed(4)
    features, captions = _randn(g, n_images, 2, 2), random_captions(g, n_captions, t, v)
    describe = (
        f"the anchor of the pairing: a toy captioner (V={v}), features ({n_images}, 2, 2) float64, captions "
        f"{captions.tolist()}, batch_size=4, seed=3"
    )
    out = student.call(
        "show_and_tell.retrieval_on_toy", weights=weights, features=features, captions=captions, batch_size=4
    )
    expect(isinstance(out, dict), f"unexpected result {type_name(out)}", describe)
    got = expect_float_tensor(
        "retrieval_scores(model, features, captions)", out["scores"], (n_images, n_captions), describe
    )
    pair_features, pair_captions = features.repeat_interleave(n_captions, 0), captions.repeat(n_images, 1)
    expected = enumerated_log_probs(toy_caption_logits(weights, pair_features, pair_captions), pair_captions).reshape(
        n_images, n_captions
    )
    tol = RNN_MODEL.for_dtypes(F64, got.dtype)
    expect_tensor(
        "retrieval_scores (expected: the model's log p(caption j | image i) at [i, j], which your "
        "caption_log_probs computes: check 1.14 tests it alone)",
        got,
        expected,
        tolerance=tol,
        case=describe,
        check_dtype=False,
    )


# The graded retrieval's size (about 200 hidden scenes, every image with every caption) and the most calls of the
# model the docstring allows there: one image with all its captions per call (200 calls) is well inside; one pair per
# call (40,000 calls) is not, and runs past the 20 s the trained model is given on a slow machine.
GRADED_RETRIEVAL_SIZE, MOST_RETRIEVAL_CALLS = 200, 1000


def expect_the_graded_size_in_few_calls(student) -> None:
    """retrieval_scores at the graded size (GRADED_RETRIEVAL_SIZE images and captions, the default batch_size) runs the
    model at most MOST_RETRIEVAL_CALLS times: the bound its docstring states. Values are the property's business."""
    n, t, v = GRADED_RETRIEVAL_SIZE, 10, 6
    weights = toy_caption_weights(0, v, t, 4)
    g = torch.Generator().manual_seed(1)
    features, captions = _randn(g, n, 2, 2), random_captions(g, n, t, v)
    describe = (
        f"a toy captioner (V={v}), features ({n}, 2, 2) float64, captions ({n}, {t}), the default batch_size, seed=0"
    )
    out = student.call(
        "show_and_tell.retrieval_on_toy", weights=weights, features=features, captions=captions, batch_size=None
    )
    expect(isinstance(out, dict), f"unexpected result {type_name(out)}", describe)
    calls = out["calls"]
    expect(
        len(calls) <= MOST_RETRIEVAL_CALLS,
        f"retrieval_scores ran the model {len(calls)} times for {n} x {n} pairs ({n * n // max(1, len(calls))} pairs "
        f"a call on average): at most {MOST_RETRIEVAL_CALLS} calls at this size, as its docstring says (the graded "
        f"retrieval with the trained model, about {n} x {n} pairs, stops the model after 20 s)",
        describe,
    )


def _retrieval_property(student, case, locs: int, d: int) -> None:
    """retrieval_scores against the student's own caption_log_probs of every pair, built here (image-major)."""
    seed, n_images, n_captions, t, v, batch_size = case
    weights = toy_caption_weights(seed, v, t, locs * d)
    g = torch.Generator().manual_seed(seed + 1)
    features = _randn(g, n_images, locs, d)
    captions = random_captions(g, n_captions, t, v)
    describe = (
        f"a toy captioner (V={v}), features ({n_images}, {locs}, {d}) float64, captions ({n_captions}, {t}) "
        f"{captions.tolist()}, batch_size={batch_size}, seed={seed}"
    )
    pairs = _toy_log_probs(student, weights, features.repeat_interleave(n_captions, 0), captions.repeat(n_images, 1))
    pairs = expect_float_tensor(
        "caption_log_probs on every (image, caption) pair", pairs, (n_images * n_captions,), describe
    ).reshape(n_images, n_captions)
    out = student.call(
        "show_and_tell.retrieval_on_toy", weights=weights, features=features, captions=captions, batch_size=batch_size
    )
    expect(isinstance(out, dict), f"unexpected result {type_name(out)}", describe)
    got = out["scores"]
    if isinstance(got, torch.Tensor) and n_images != n_captions and tuple(got.shape) == (n_captions, n_images):
        expect(
            False,
            f"retrieval_scores: expected shape ({n_images}, {n_captions}) (rows are the images, columns the "
            f"captions), got ({n_captions}, {n_images})",
            describe,
        )
    got = expect_float_tensor("retrieval_scores(model, features, captions)", got, (n_images, n_captions), describe)
    tol = RNN_MODEL.for_dtypes(F64, got.dtype)
    if (
        n_images == n_captions > 1
        and not tol.allclose(got.to(F64), pairs.to(F64))
        and tol.allclose(got.T.to(F64), pairs.to(F64))
    ):
        expect(
            False,
            "retrieval_scores: entry [i, j] holds caption i on image j; expected image i with caption j "
            "(rows are the images)",
            describe,
        )
    expect_tensor(
        "retrieval_scores(model, features, captions) (expected: your caption_log_probs of image i with "
        "caption j at [i, j])",
        got,
        pairs,
        tolerance=tol,
        case=describe,
        check_dtype=False,
    )
    expect_tensor(
        "retrieval_scores: input features after the call",
        out["features_after"],
        features,
        tolerance=EXACT,
        case=describe,
    )
    expect_tensor(
        "retrieval_scores: input captions after the call",
        out["captions_after"],
        captions,
        tolerance=EXACT,
        case=describe,
    )
