"""One seed for every generator a run draws from: Python's, NumPy's and torch's."""
from __future__ import annotations

import random
import sys

import numpy as np


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices). torch is seeded once something has imported it, and never imported
    here: a process that has no use for it (a Part 3 worker, autograder.worker.main.preload) does not pay for it, and
    one that imports it later starts from torch's own fixed default seed."""
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
