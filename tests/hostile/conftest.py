"""The hostile suite measures the sandbox's own limits: it runs them unscaled (see tests/conftest.py)."""

import dataclasses

import pytest

from autograder.public import limits


@pytest.fixture(autouse=True)
def unscaled_time_limits(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, scale=1.0))
