"""Part 4 public checks: the attention step and its gradients against F.scaled_dot_product_attention and the
properties of its weights, the coordinate channels against their closed form, the soft-attention captioner against the reference
with the same injected weights (golden data). (The part's hidden checks and its training check run in
the grader, after the deadline; they are not in the handout.)

Expected values come from F.scaled_dot_product_attention (the context; with the identity as values, the
weights), closed forms, or, for the captioner, the reference model run in float64 on fixed cases by the
instructor's tooling and stored as golden data (autograder/public/golden/attention.pt); never from the student's
own output, except where the property itself compares two of its outputs (invariance to permuting locations).
In the grader's round the captioner's cases are drawn from its seed and scored by the reference there.
An attention case named "N, L, d, D, scale, seed=s" is query = tensor(s, N, d) * scale, keys =
tensor(s + 1, N, L, d) * scale, values = tensor(s + 2, N, L, D) with autograder.public.strategies.tensor (float64),
so a student can rebuild it from the message.

Accepted readings where the spec leaves a choice:
- float64 inputs may give float64 results, or float32 ones (a float32 accumulator somewhere) checked at
  float32 tolerance; float32 inputs must give float32 results.
- forward's logits are compared after a log-softmax: logits are defined up to a constant per row, so a
  forward that returns log-probabilities (say, by calling step) is as correct as one that returns raw scores.

The checks live in this package's modules, in the order they run: step (attend and with_coords) and captioner (the
captioner on golden cases: captioner_case, golden_cases and FINGERPRINT). This module imports them in that order,
and holds the names other modules read from the part's checks: the hidden checks' helpers, golden_cases and
FINGERPRINT.
"""

from __future__ import annotations

# The modules in the order their checks register, which is the part's order of checks (isort would sort them);
# each name imported from one is a name other modules read from the package.
# isort: off
from autograder.public.checks.attention import step
from autograder.public.checks.attention.step import (
    GRID,
    PROBE_ATTENTION,
    PROBE_COORDS,
    _attend,
    _attention_inputs,
    _check_coords,
    _expect_distribution,
    _sdpa_context,
    _sdpa_weights,
    expect_weights_depend_on_the_query,
)
from autograder.public.checks.attention import captioner
from autograder.public.checks.attention.captioner import (
    FINGERPRINT,
    PROBE_CAPTIONER,
    _captioner_inputs,
    _check_forward,
    _check_steps,
    _state,
    captioner_case,
    golden_cases,
)
# isort: on

__all__ = [
    "FINGERPRINT",
    "GRID",
    "PROBE_ATTENTION",
    "PROBE_CAPTIONER",
    "PROBE_COORDS",
    "_attend",
    "_attention_inputs",
    "_captioner_inputs",
    "_check_coords",
    "_check_forward",
    "_check_steps",
    "_expect_distribution",
    "_sdpa_context",
    "_sdpa_weights",
    "_state",
    "captioner",
    "captioner_case",
    "expect_weights_depend_on_the_query",
    "golden_cases",
    "step",
]
