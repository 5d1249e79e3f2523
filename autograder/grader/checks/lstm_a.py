"""Part 6 hidden checks: teacher forcing equals the reference model with the same weights, at small sizes and at the lecture's. (The public checks and the helpers both use:
autograder/public/checks/lstm_a.py.)"""

from __future__ import annotations

import torch
from hypothesis import example, given

from autograder.grader.tolerances import LSTM_A_FLOAT32
from autograder.public.checks import check
from autograder.public.checks.lstm_a import FIRST, _describe, _inputs, _model_call, _weights
from autograder.public.compare import expect_tensor
from autograder.public.strategies import LSTM_A_VARIANTS, PROPERTY, lstm_a_sizes
from autograder.public.tolerances import LSTM_A
from shared.encoder import D_ANN, L_GRID
from shared.scenes import N_ATTRIBUTES
from shared.vocab import T_MAX, VOCAB_SIZE
from solutions import lstm_a as reference


def _reference_logits(variant: str, sizes: dict, weights: dict, features, attributes, captions) -> torch.Tensor:
    s = sizes
    model = reference.LSTMA(
        variant, n_vocab=s["V"], D=s["D"], L=s["L"], E=s["E"], H=s["H"], n_attr=s["n_attr"], DV=s["DV"]
    ).to(weights["cell.weight_ih"].dtype)
    model.load_state_dict(weights)
    with torch.no_grad():
        return model.eval()(features, attributes, captions)


@check()
def forward_matches_the_reference(student, ctx):
    """LSTMA.forward (teacher forcing) equals the reference model with the same weights, for all six variants."""

    @PROPERTY
    @given(lstm_a_sizes(max_n=5, max_dim=8))
    @example(FIRST)
    def prop(sizes):
        weights = _weights(sizes)
        features, attributes, captions = _inputs(sizes)
        for variant in LSTM_A_VARIANTS:
            got = _model_call(student, "lstm_a.forward_case", variant, sizes, weights, features, attributes, captions)
            want = _reference_logits(variant, sizes, weights, features, attributes, captions)
            expect_tensor("forward logits (N, T-1, V)", got, want, tolerance=LSTM_A, case=_describe(sizes, variant))

    prop()
    # The lecture's sizes and dtype: float32 weights (the reference's own initialisation, open gate biases),
    # compared with the same float32 weights evaluated in float64; float32 rounding there is about 4e-7.
    sizes = dict(seed=6, N=3, T=T_MAX, V=VOCAB_SIZE, D=D_ANN, L=L_GRID, E=64, H=96, DV=64, n_attr=N_ATTRIBUTES)
    features, attributes, captions = _inputs(sizes, dtype=torch.float32)
    for variant in LSTM_A_VARIANTS:
        with torch.random.fork_rng():
            torch.manual_seed(sizes["seed"])
            weights = reference.LSTMA(variant).state_dict()
        got = _model_call(
            student, "lstm_a.forward_case", variant, sizes, weights, features, attributes, captions, float64=False
        )
        want = _reference_logits(
            variant,
            sizes,
            {k: v.double() for k, v in weights.items()},
            features.double(),
            attributes.double(),
            captions,
        )
        expect_tensor(
            "forward logits (N, T-1, V), float32 at the lecture's sizes",
            got,
            want.float(),
            tolerance=LSTM_A_FLOAT32,
            case=_describe(sizes, variant),
        )
