"""Hypothesis strategies for every part, in one place. Sizes are bounded so a property test stays
fast; floats are bounded so tolerances mean something."""
from __future__ import annotations

import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# Derandomised, no example database, no deadline: the same submission gets the same examples every run.
PROPERTY = settings(derandomize=True, database=None, deadline=None, max_examples=25, print_blob=False,
                    report_multiple_bugs=False, suppress_health_check=list(HealthCheck))
FEW = settings(PROPERTY, max_examples=10)

seeds = st.integers(min_value=0, max_value=2 ** 31 - 1)
small = st.integers(min_value=1, max_value=5)


def tensor(seed: int, *shape: int, dtype=torch.float64, scale: float = 1.0) -> torch.Tensor:
    """A reproducible standard-normal tensor of the given shape (scaled)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype) * scale
