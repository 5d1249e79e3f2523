"""Hypothesis strategies of every part, and the one way a check runs a property. Sizes are bounded so a property
test stays fast; floats are bounded so tolerances mean something.

Where a strategy lives: every strategy a check draws from is a module-level name here, named for what it draws and
under its part's heading, or, when only hidden checks draw from it, in autograder.grader.strategies (their ranges
stay with the staff). A check's @given names them, or calls a composite of this module with its arguments; no check
module builds a strategy of its own (the kit's test_check_modules), but for `st.data()` and what a property draws
from it inside its body.

What changes a property's cases: hypothesis derives a derandomised property's cases from a digest of its source text
as inspect.getsource gives it, comments and blank lines left out. It leaves the decorators out only of source that
parses on its own, which a property defined inside its check (every property of the kit, indented) is not: the
digest covers the property from its first decorator line to its last. So editing the body, or the decorators (a
strategy on the @given line replaced by its name here, even with the same expression; the case count's name; an
@example), changes every case that property draws; a comment, a blank line, anything outside the property (the rest
of its check, a helper it calls, a strategy's definition here as long as it draws the same) and moving the property
verbatim, at the same indentation, into another module do not.

A property check:

    @check()
    def beam_width_one_is_greedy(student, ctx):
        "the property, in one line"
        @PROPERTY                   # how many cases: FEW (10), PROPERTY (25), MORE (60) or examples(n)
        @given(toy_cases)           # what the cases are: a strategy of this module
        @example(FIRST_CASE)        # optional: one small case tried first, so code that fails everywhere fails on it
        def prop(case):
            ...
        prop()

Cases are derandomised, with no example database and no deadline: the same submission meets the same cases on
every run. What a failure costs is chosen by the engine from the check's visibility (autograder.public.checks.
visibility): a public check shrinks a failing case to a small one for its message; a hidden check shows no case,
so it reports the first failure without shrinking (each shrinking step is a round trip to the worker). In the
grader's round of a public check (autograder.public.checks.Round) the cases are drawn from the round's seed.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable

import torch
from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as seeded
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from autograder.public.checks import current_round, visibility


def _keep_hypothesis_out_of_the_working_folder() -> None:
    """Hypothesis caches what it reads from source files in ./.hypothesis/ even with no example database: a
    student's handout folder and the grader's working folder stay as they were, the cache goes to a private
    temporary folder removed at exit (unless $HYPOTHESIS_STORAGE_DIRECTORY names one)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    home = tempfile.mkdtemp(prefix="captionkit-hypothesis-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    set_hypothesis_home_dir(home)


_keep_hypothesis_out_of_the_working_folder()


def _draw_no_local_constants() -> None:
    """hypothesis (6.131 on) mixes into its draws the constants it finds in the source of every "local" module in
    sys.modules (not the standard library's, not site-packages'), collected again whenever sys.modules grows. Here
    that set is whatever the process imported before the draw: the parts graded before this one, reference modules,
    an editable install or not, a student's own module in a notebook kernel. So the same check on the same submission
    drew other cases in a full grade than in `grade --part` or `batch --part`, and a public check's cases at the
    student's desk were not quite those of the grader's public round. An empty pool makes a check's cases depend on
    its round and the installed hypothesis only (the kit's tests prove it). hypothesis offers no setting for it;
    where its private hook is missing, the release has no such pool or renamed it, which that test would show."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a release from before the pool
        return
    if not hasattr(providers, "_get_local_constants"):
        return
    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()  # what this process cached before, from the pool as it was


_draw_no_local_constants()

# No "explain" phase: it reruns a failing example many times (each a round trip to the worker) only to annotate a
# report the grader does not show; the shrunk example is named by the check's own message.
_BASE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
)
SHRINKING = (Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink)
NOT_SHRINKING = (Phase.explicit, Phase.reuse, Phase.generate)


def examples(n: int) -> Callable:
    """A decorator for a property trying `n` generated cases (after its @example cases): derandomised in the public
    round, shrinking a failure only in a public check; drawn from the round's seed in the grader's round (its
    failures show no case, so they are not shrunk either)."""

    def apply(test: Callable) -> Callable:
        now = current_round()
        if not now.public:
            return seeded(now.seed)(settings(_BASE, derandomize=False, max_examples=n, phases=NOT_SHRINKING)(test))
        phases = SHRINKING if visibility() == "public" else NOT_SHRINKING
        return settings(_BASE, max_examples=n, phases=phases)(test)

    return apply


FEW, PROPERTY, MORE = examples(10), examples(25), examples(60)

seeds = st.integers(min_value=0, max_value=2**31 - 1)


def tensor(seed: int, *shape: int, dtype=torch.float64, scale: float = 1.0) -> torch.Tensor:
    """A reproducible standard-normal tensor of the given shape (scaled)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype) * scale


# -- Part 1 (show_and_tell) ------------------------------------------------------------------------

DTYPES = {"float32": torch.float32, "float64": torch.float64}


def step_cases(max_n: int, max_dim: int) -> st.SearchStrategy:
    """(seed, N, E, H, dtype name) of one relu_rnn_step case."""
    return st.tuples(
        seeds, st.integers(1, max_n), st.integers(1, max_dim), st.integers(1, max_dim), st.sampled_from(sorted(DTYPES))
    )


def loss_cases(max_n: int, max_t: int, vocab: st.SearchStrategy) -> st.SearchStrategy:
    """(seed, N, T, V, logit scale, dtype name) of one caption_loss case."""
    return st.tuples(
        seeds,
        st.integers(1, max_n),
        st.integers(2, max_t),
        vocab,
        st.sampled_from([1.0, 3.0]),
        st.sampled_from(sorted(DTYPES)),
    )


# (seed, N, T, V, D, L, E, H, DV) of a small ShowTellRNN and batch.
model_cases = st.tuples(
    seeds,
    st.integers(1, 3),
    st.integers(2, 5),
    st.integers(4, 8),
    st.integers(1, 3),
    st.integers(1, 4),
    st.integers(1, 5),
    st.integers(1, 6),
    st.integers(1, 4),
)
# (seed, N, T, V, logit scale, dtype name) of the public caption_loss checks: small batches and vocabularies.
small_loss_cases = loss_cases(4, 6, st.integers(4, 8))
# How many all-PAD columns a padding check appends to the captions (and steps to what it scores).
extra_pad_columns = st.integers(1, 3)
# Whether a step is given an image term (in step's state: N(0, 1) values, else zeros; relu_rnn_step: else None).
image_term_flags = st.booleans()


# -- Part 2 (decoding) ----------------------------------------------------------------------------

# (seed, contexts in the batch, steps, vocabulary, END bias): toy models small enough to enumerate every sequence.
toy_cases = st.tuples(seeds, st.integers(1, 4), st.integers(1, 3), st.integers(4, 6), st.sampled_from([-1.0, 0.0, 1.5]))
# k of a beam search that need not be exact: its scores and their order are checked, not which captions it keeps.
beam_widths = st.integers(1, 6)


# -- Part 5 (reinforce) ---------------------------------------------------------------------------

# (seed, N, L, logit scale, some weights exactly zero): distributions over locations.
weight_cases = st.tuples(seeds, st.integers(1, 5), st.integers(1, 8), st.sampled_from([0.5, 1.0, 3.0]), st.booleans())
# Shapes of the per-step tensors of reinforce_loss: (T,) or (N, T).
loss_shapes = st.one_of(st.tuples(st.integers(1, 6)), st.tuples(st.integers(1, 5), st.integers(1, 5)))
wide_loss_shapes = st.one_of(st.tuples(st.integers(1, 16)), st.tuples(st.integers(1, 16), st.integers(1, 10)))
# How reinforce_loss is given its baseline: in the formula's check, and in the check that rewards and baseline are
# constants (tensors that must get no gradient, a per-step one broadcast).
formula_baselines = st.sampled_from(["default", "zero", "float"])
constant_baselines = st.sampled_from(["0-d tensor", "per step", "full", "float"])
# Whether reinforce_loss is given a 0/1 mask (at least one 1) or None.
mask_flags = st.booleans()
# S: how many samples optimal_baseline averages over.
baseline_sample_counts = st.integers(1, 40)


# -- Part 6 (lstm_a) ------------------------------------------------------------------------------

LSTM_A_VARIANTS = ("LSTM", "A1", "A2", "A3", "A4", "A5")
# Names schedule() must reject with ValueError: near misses of the six valid ones.
lstm_a_unknown_variants = st.sampled_from(["A6", "A0", "lstm", "a1", "", "A 1", "LSTM-A", "A4 "])
# N and E of schedule's two inputs (image_input, attr_input): in the table's check, and in the gradients' check.
schedule_batch_sizes = st.integers(1, 4)
schedule_widths = st.integers(1, 6)
gradient_batch_sizes = st.integers(1, 3)
gradient_widths = st.integers(1, 5)


@st.composite
def lstm_a_sizes(draw, max_n: int = 4, max_dim: int = 6) -> dict:
    """Sizes of a small LSTM-A model and batch: seed, N, T (caption length), V, D, L, E, H, DV, n_attr.
    DV equals E in about half the cases, so a model that skips the image projection Tv is caught on values,
    not only on shapes; E and H are drawn independently, so zeros of the wrong width show up."""
    e = draw(st.integers(1, max_dim))
    return dict(
        seed=draw(seeds),
        N=draw(st.integers(1, max_n)),
        T=draw(st.integers(2, 6)),
        V=draw(st.integers(4, 9)),
        D=draw(st.integers(1, 4)),
        L=draw(st.integers(1, 4)),
        E=e,
        H=draw(st.integers(1, max_dim)),
        DV=draw(st.one_of(st.just(e), st.integers(1, max_dim))),
        n_attr=draw(st.integers(1, 7)),
    )


# -- Part 4 (attention) ---------------------------------------------------------------------------

# (seed, N, L, d, D, scale): one attention step. `scale` multiplies query and keys, so scores range from
# nearly uniform weights (0.25) to nearly one-hot ones (3.0) while staying far from overflow in float32.
attention_cases = st.tuples(
    seeds,
    st.integers(1, 4),
    st.integers(1, 12),
    st.integers(1, 8),
    st.integers(1, 8),
    st.sampled_from([0.25, 1.0, 3.0]),
)
# (seed, N, grid, D): a grid x grid annotation map for with_coords.
coords_cases = st.tuples(seeds, st.integers(1, 3), st.integers(1, 8), st.integers(1, 4))


@st.composite
def captioner_sizes(draw) -> dict:
    """Sizes of a small AttnCaptioner and batch: seed, N, T (caption length), L (locations), and the
    constructor's n_vocab, D, E, H, K, each drawn independently so a mix-up of two widths fails on shapes."""
    return dict(
        seed=draw(seeds),
        N=draw(st.integers(1, 3)),
        T=draw(st.integers(2, 5)),
        L=draw(st.integers(1, 9)),
        n_vocab=draw(st.integers(4, 8)),
        D=draw(st.integers(1, 6)),
        E=draw(st.integers(1, 5)),
        H=draw(st.integers(1, 6)),
        K=draw(st.integers(1, 4)),
    )


# -- Part 7 (stylenet) ----------------------------------------------------------------------------

# (seed, N, E, H, rank): one factored LSTM cell and a batch. E, H and rank are drawn independently, so a
# transposed or misplaced factor fails on shapes or values (E == 4H happens, and is caught on values).
factored_cases = st.tuples(seeds, st.integers(1, 4), st.integers(1, 6), st.integers(1, 5), st.integers(1, 5))
# A mix lam for S = (1 - lam) S_factual + lam S_romantic: the ends 0 and 1 (a mix of 0 is not "no mix") and any
# value in between.
style_mixes = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0, allow_nan=False, width=32))
# T: how many steps a factored cell runs, from one state.
cell_steps = st.integers(1, 3)


# -- Part 3 (bleu) --------------------------------------------------------------------------------

# Captions over a few words, so that n-grams repeat (clipping matters) and 3- and 4-grams still match.
BLEU_WORDS = ("a", "red", "blue", "circle", "square", "above", "left", "of")
# What str.split() treats as one separator; the lead and tail of a caption may be whitespace too.
bleu_separators = st.sampled_from([" ", "  ", "\t", "\n", " \t "])
bleu_margins = st.sampled_from(["", " ", "  ", "\t", "\n "])
# The grader's round of the checks with fixed public cases: n of ngram_counts, n of clipped_counts, and max_n of
# corpus_bleu (None: its default, 4).
ngram_orders = st.integers(1, 4)
clipped_orders = st.integers(1, 3)
optional_max_orders = st.one_of(st.none(), st.integers(1, 4))


def bleu_words(vocab: int = 4, min_size: int = 0, max_size: int = 9):
    """One caption as a list of words from the first `vocab` BLEU_WORDS."""
    return st.lists(st.sampled_from(BLEU_WORDS[:vocab]), min_size=min_size, max_size=max_size)


@st.composite
def bleu_sentence(draw, vocab: int = 5, max_refs: int = 3, min_words: int = 0, max_words: int = 9):
    """(candidate words, [reference words, ...]): 1..max_refs references of 1..max_words words. The candidate
    is random, or one of the references after up to 3 substitutions, deletions and insertions (so that higher
    orders match too); it has min_words..max_words words."""
    words = st.sampled_from(BLEU_WORDS[:vocab])
    refs = draw(st.lists(bleu_words(vocab, 1, max_words), min_size=1, max_size=max_refs))
    if draw(st.booleans()):
        return draw(bleu_words(vocab, min_words, max_words)), refs
    hyp = list(draw(st.sampled_from(refs)))
    for _ in range(draw(st.integers(0, 3))):
        op, i = draw(st.sampled_from(("sub", "del", "ins"))), draw(st.integers(0, len(hyp)))
        if op == "ins" and len(hyp) < max_words:
            hyp.insert(i, draw(words))
        elif op == "del" and i < len(hyp) and len(hyp) > min_words:
            del hyp[i]
        elif op == "sub" and i < len(hyp):
            hyp[i] = draw(words)
    while len(hyp) < min_words:
        hyp.append(draw(words))
    return hyp, refs


def _bleu_strings(pairs) -> tuple[list[str], list[list[str]]]:
    pairs = list(pairs)
    return [" ".join(h) for h, _ in pairs], [[" ".join(r) for r in rs] for _, rs in pairs]


@st.composite
def bleu_corpus(draw, min_sentences: int = 1, max_sentences: int = 6, **sentence):
    """(hyps, refs): a corpus of bleu_sentence()s as whitespace-joined strings."""
    return _bleu_strings(draw(st.lists(bleu_sentence(**sentence), min_size=min_sentences, max_size=max_sentences)))


@st.composite
def bleu_self_corpus(draw, max_sentences: int = 6, max_extra_refs: int = 2):
    """(hyps, refs, max_n): every candidate is among its own references (with 0..max_extra_refs others, in
    random order); max_n is at most the longest candidate's length, so every p_n has n-grams to count."""
    hyps = draw(st.lists(bleu_words(5, 1, 9), min_size=1, max_size=max_sentences))
    refs = []
    for h in hyps:
        rs = [h] + draw(st.lists(bleu_words(5, 1, 9), max_size=max_extra_refs))
        refs.append(draw(st.permutations(rs)))
    max_n = draw(st.integers(1, min(5, max(len(h) for h in hyps))))
    return (*_bleu_strings(zip(hyps, refs)), max_n)


@st.composite
def bleu_brevity_corpus(draw, max_n: int = 4, max_sentences: int = 4, tie: bool = False):
    """(hyps, refs, max_n): every candidate is a run of max_n..7 words inside one of its references, so
    every p_n = 1 and BLEU-N is the brevity penalty alone. That reference adds 0..4 words around the run;
    0..2 other references have 1..12 random words. With tie=True each sentence has exactly two references,
    d words shorter and d words longer than the candidate (the longer one contains it), in random order."""
    max_n = draw(st.integers(1, max_n))
    hyps, refs = [], []
    for _ in range(draw(st.integers(1, max_sentences))):
        hyp = draw(bleu_words(6, max(max_n, 2 if tie else 1), 7))
        if tie:
            d = draw(st.integers(1, len(hyp) - 1))
            cut = draw(st.integers(0, d))
            extra = draw(bleu_words(6, d, d))
            rs = [extra[:cut] + hyp + extra[cut:], draw(bleu_words(6, len(hyp) - d, len(hyp) - d))]
        else:
            rs = [draw(bleu_words(6, 0, 4)) + hyp + draw(bleu_words(6, 0, 4))]
            rs += draw(st.lists(bleu_words(6, 1, 12), max_size=2))
        hyps.append(hyp)
        refs.append(draw(st.permutations(rs)))
    return (*_bleu_strings(zip(hyps, refs)), max_n)


@st.composite
def bleu_zero_corpus(draw, kind: str | None = None):
    """(hyps, refs, max_n, k): a corpus whose k-gram precision p_k is 0, so BLEU-k..BLEU-max_n are 0.
    `kind` (drawn when None) "crossed": each reference has distinct words; a candidate is its reference cut
    into runs of k - 1 words put in reverse order (every k-gram crosses a cut, so none is in the reference)
    or the reference's first 0..k-1 words; p_1 .. p_(k-1) > 0. "short": every candidate has fewer than k
    words (no k-grams at all), the first one k - 1. "empty": every candidate is empty or whitespace (c = 0)."""
    kind = kind or draw(st.sampled_from(("crossed", "short", "empty")))
    k = draw(st.integers(1, 4)) if kind == "empty" else draw(st.integers(2, 4))
    max_n = draw(st.integers(k, 5))
    hyps, refs = [], []
    for i in range(draw(st.integers(1, 4))):
        ref = draw(st.permutations(BLEU_WORDS))[: draw(st.integers(k, len(BLEU_WORDS)))]
        if kind == "empty":
            hyp = draw(st.sampled_from(["", " ", "\t \n"]))
        elif kind == "crossed" and (i == 0 or draw(st.booleans())):
            runs = [ref[j : j + k - 1] for j in range(0, len(ref), k - 1)]
            hyp = " ".join(w for run in reversed(runs) for w in run)
        else:
            hyp = " ".join(ref[: k - 1 if i == 0 else draw(st.integers(0, k - 1))])
        hyps.append(hyp)
        refs.append([" ".join(ref)])
    return hyps, refs, max_n, k


def bleu_reorderable_corpus() -> st.SearchStrategy:
    """(hyps, refs): random corpora of 2..6 sentences, and corpora of closest-length ties, where the brevity penalty
    is below 1 if a tie went to the longer reference."""
    return st.one_of(
        bleu_corpus(min_sentences=2, max_sentences=6, vocab=4),
        bleu_brevity_corpus(max_n=1, max_sentences=4, tie=True).map(lambda corpus: corpus[:2]),
    )


@st.composite
def bleu_oracle_corpus(draw, max_sentences: int = 8):
    """(hyps, refs) where the kit's, nltk's and pycocoevalcap's BLEU-1..4 coincide: every
    candidate has at least 4 words, and the first candidate is one of its references, so every p_n > 0."""
    first = draw(bleu_words(6, 4, 9))
    first_refs = draw(st.permutations([first] + draw(st.lists(bleu_words(6, 1, 9), max_size=2))))
    pairs = [(first, first_refs)]
    pairs += draw(st.lists(bleu_sentence(vocab=6, min_words=4), max_size=max_sentences - 1))
    return _bleu_strings(draw(st.permutations(pairs)))


# -- Part 1 (show_and_tell): retrieval and the image controls ----------------------------------------

# (seed, N, T, V, L, D) of a toy captioner (autograder.worker.toys) and N (image, caption) pairs.
toy_caption_cases = st.tuples(
    seeds, st.integers(1, 4), st.integers(2, 6), st.integers(4, 8), st.integers(1, 3), st.integers(1, 3)
)
# (seed, I images, C captions, T, V, batch_size) of a retrieval matrix on the toy captioner.
retrieval_cases = st.tuples(
    seeds, st.integers(1, 5), st.integers(1, 5), st.integers(2, 5), st.integers(4, 7), st.integers(1, 12)
)
# H and E of the given ShowTellLSTM whose captions caption_log_probs scores beside the toy captioner's.
lstm_hidden_sizes = st.integers(1, 4)
lstm_embedding_sizes = st.integers(1, 6)
# (seed, N, distinct values (2 or 3: many ties; 0: continuous scores), k before clamping to N) of recall_at_k.
ranking_cases = st.tuples(seeds, st.integers(1, 6), st.sampled_from([2, 3, 0]), st.integers(1, 6))
# (seed, N scenes, dtype name, the shape of one scene's features) of the image controls.
control_cases = st.tuples(
    seeds, st.integers(2, 6), st.sampled_from(sorted(DTYPES)), st.sampled_from([(3,), (2, 3), (1, 1)])
)
