"""Part 5 public checks: the location sampler (its distribution, its generator, its differentiable log-probability),
the REINFORCE loss against its formula (rewards and baseline constants, no gradient into them), the score-function estimator against the exact gradient computed by
enumerating every location (the lecture's Section 5.1), the baselines against their closed forms. (The part's
hidden checks and hard attention trained on hidden data run in the grader, after the deadline.)

Any exact sampler is correct, so no check compares indices with the reference's draws: sampled indices are
judged by their frequencies (binomial standard errors), by reproducibility from a generator state, and
through values that are functions of the index the student drew. Monte Carlo tolerances come from standard
errors computed in closed form by enumeration, never from the student's own samples.

The checks live in this package's modules, in the order they run: sampler (sample_location) and estimator
(reinforce_loss, the estimator, the baselines). This module imports them in that order, and holds the names the
hidden checks read from the part's checks.
"""

from __future__ import annotations

# The modules in the order their checks register, which is the part's order of checks (isort would sort them);
# each name imported from one is a name other modules read from the package.
# isort: off
from autograder.public.checks.reinforce import sampler
from autograder.public.checks.reinforce.sampler import _check_frequencies, _distributions, _repeat, _sample
from autograder.public.checks.reinforce import estimator
from autograder.public.checks.reinforce.estimator import N_ESTIMATE, _check_unbiased, _check_update, _estimates, _exact
# isort: on

__all__ = [
    "N_ESTIMATE",
    "_check_frequencies",
    "_check_unbiased",
    "_check_update",
    "_distributions",
    "_estimates",
    "_exact",
    "_repeat",
    "_sample",
    "estimator",
    "sampler",
]
