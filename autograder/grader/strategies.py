"""The hypothesis strategies that only the hidden checks (autograder/grader/checks/) draw from: their ranges stay with
the staff. Everything else a hidden check draws, and how a property runs (FEW, PROPERTY, MORE, examples), is in
autograder.public.strategies, whose docstring says where a strategy lives and what moving one costs: no check module
builds a strategy of its own (tests/public/test_check_modules.py), and a property's cases are derived from its source text,
decorators included."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from autograder.public.checks.stylenet import LECTURE
from autograder.public.strategies import loss_cases, seeds
from shared.vocab import T_MAX, VOCAB_SIZE

# -- Part 1 (show_and_tell) ------------------------------------------------------------------------

# (seed, N, T, V, logit scale, dtype name) of caption_loss on batches of the real vocabulary and caption length.
full_size_loss_cases = loss_cases(16, T_MAX, st.just(VOCAB_SIZE))
# (seed, I images, C captions, T, V, batch_size) of a retrieval matrix on the toy captioner at the real sizes.
full_size_retrieval_cases = st.tuples(
    seeds, st.integers(8, 24), st.integers(8, 24), st.just(T_MAX), st.just(VOCAB_SIZE), st.integers(1, 200)
)
# (seed, N, distinct values (0: continuous scores), k before clamping to N) of recall_at_k on larger matrices.
larger_ranking_cases = st.tuples(seeds, st.integers(10, 40), st.sampled_from([2, 3, 0]), st.integers(1, 40))


# -- Part 2 (decoding) ----------------------------------------------------------------------------

# k of a beam searched in a batch and alone.
batched_beam_widths = st.integers(2, 4)


# -- Part 5 (reinforce) ---------------------------------------------------------------------------

# R distributions over L locations of the sampler's check, and the scale of their logits (3.0: near one-hot rows).
sampler_distribution_counts = st.integers(2, 4)
sampler_locations = st.integers(2, 12)
sampler_logit_scales = st.sampled_from([0.3, 1.0, 3.0])
# L locations of a random estimator problem, the offset of its rewards, and the baseline it is given.
estimator_locations = st.integers(2, 8)
reward_offsets = st.sampled_from([-8.0, 6.0])
estimator_baselines = st.sampled_from(["float", "0-d tensor", "optimal"])
# update_baseline: N rewards, T steps (None: rewards of shape (N,)), the baseline's kind, the momentum (None: default).
update_batch_sizes = st.integers(1, 8)
update_steps = st.one_of(st.none(), st.integers(1, 6))
update_baselines = st.sampled_from(["none", "float", "tensor"])
update_momenta = st.sampled_from([None, 0.0, 0.5, 0.9, 1.0])


# -- Part 4 (attention) ---------------------------------------------------------------------------

# What makes attend's weights uniform.
uniform_weight_causes = st.sampled_from(["equal keys", "zero query"])
# with_coords on grids up to 16, in either float dtype.
larger_grids = st.integers(1, 16)
float_dtypes = st.sampled_from([torch.float64, torch.float32])


# -- Part 7 (stylenet) ----------------------------------------------------------------------------

# (E, H, rank) of a factored cell, and (N, E, H, rank) with a batch, up to the lecture's cell.
cell_sizes = st.sampled_from([(1, 1, 1), (7, 3, 2), (20, 9, 6), LECTURE])
batched_cell_sizes = st.sampled_from([(1, 1, 1, 1), (3, 7, 3, 2), (5, 20, 9, 6), (4, *LECTURE)])
# T steps of the cell, and the scale of its inputs.
more_cell_steps = st.integers(1, 4)
cell_input_scales = st.sampled_from([0.5, 1.0, 3.0])


# -- Part 3 (bleu) --------------------------------------------------------------------------------

# n of ngram_counts and clipped_counts on longer captions.
longer_ngram_orders = st.integers(1, 5)
# max_n of corpus_bleu (None: its default, 4): against the reference, and in the invariance checks.
optional_higher_max_orders = st.one_of(st.none(), st.integers(1, 6))
max_orders = st.integers(1, 4)
