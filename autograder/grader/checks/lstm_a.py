"""Part 6 hidden checks: the schedule keeps its inputs in the autograd graph, and teacher forcing equals the reference
model with the same weights, at small sizes and at the lecture's. (The public checks and the helpers both use:
autograder/public/checks/lstm_a.py.)"""
from __future__ import annotations

import torch
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.public.checks import check
from autograder.public.checks.lstm_a import (ATOL, FIRST, INPUT_NAME, RTOL, _describe, _inputs, _model_call,
                                             _weights, _which)
from autograder.public.compare import expect, expect_tensor, expect_tuple
from autograder.public.strategies import FEW, LSTM_A_VARIANTS, PROPERTY, lstm_a_sizes, seeds, tensor
from shared.encoder import D_ANN, L_GRID
from shared.scenes import N_ATTRIBUTES
from shared.vocab import T_MAX, VOCAB_SIZE
from solutions import lstm_a as reference


def _reference_logits(variant: str, sizes: dict, weights: dict, features, attributes, captions) -> torch.Tensor:
    s = sizes
    model = reference.LSTMA(variant, n_vocab=s["V"], D=s["D"], L=s["L"], E=s["E"], H=s["H"], n_attr=s["n_attr"],
                            DV=s["DV"]).to(weights["cell.weight_ih"].dtype)
    model.load_state_dict(weights)
    with torch.no_grad():
        return model.eval()(features, attributes, captions)


@check()
def schedule_keeps_the_inputs_in_the_graph(student, ctx):
    """The tensors schedule returns carry gradients back to image_input and attr_input (nothing detached)."""
    @FEW
    @given(seeds, st.integers(1, 3), st.integers(1, 5))
    @example(0, 2, 3)
    def prop(seed, n, e):
        image, attr, weight = tensor(seed, n, e), tensor(seed + 1, n, e), tensor(seed + 2, n, e)
        zero = torch.zeros(n, e, dtype=torch.float64)
        for variant in LSTM_A_VARIANTS:
            describe = f"variant={variant!r}, N={n}, E={e}, seed={seed}"
            out = student.call("lstm_a.schedule_gradients", variant=variant, image=image, attr=attr, weight=weight)
            expect(isinstance(out, list), f"schedule({variant!r}): expected a prefix list and a per-step input",
                   describe)
            # Judged per returned tensor that is one of the inputs by value (which one belongs where is
            # schedule_follows_the_table's business): the gradient must reach that input, and only it.
            for k, entry in enumerate(out):
                value, grad_image, grad_attr = expect_tuple("(value, gradients)", entry, 3, describe)
                which = _which(value, image, attr)
                if which not in INPUT_NAME:
                    continue
                for name, got in (("image", grad_image), ("attr", grad_attr)):
                    expect_tensor(f"gradient of returned tensor {k} (a copy of {INPUT_NAME[which]}) with respect to "
                                  f"{INPUT_NAME[name]} in schedule({variant!r})", got,
                                  weight if name == which else zero, rtol=1e-12, atol=1e-12, case=describe)
    prop()


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
            expect_tensor("forward logits (N, T-1, V)", got, want, rtol=RTOL, atol=ATOL, case=_describe(sizes, variant))
    prop()
    # The lecture's sizes and dtype: float32 weights (the reference's own initialisation, open gate biases),
    # compared with the same float32 weights evaluated in float64; float32 rounding there is about 4e-7.
    sizes = dict(seed=6, N=3, T=T_MAX, V=VOCAB_SIZE, D=D_ANN, L=L_GRID, E=64, H=96, DV=64, n_attr=N_ATTRIBUTES)
    features, attributes, captions = _inputs(sizes, dtype=torch.float32)
    for variant in LSTM_A_VARIANTS:
        with torch.random.fork_rng():
            torch.manual_seed(sizes["seed"])
            weights = reference.LSTMA(variant).state_dict()
        got = _model_call(student, "lstm_a.forward_case", variant, sizes, weights, features, attributes, captions,
                          float64=False)
        want = _reference_logits(variant, sizes, {k: v.double() for k, v in weights.items()}, features.double(),
                                 attributes.double(), captions)
        expect_tensor("forward logits (N, T-1, V), float32 at the lecture's sizes", got, want.float(), rtol=1e-5,
                      atol=1e-5, case=_describe(sizes, variant))
