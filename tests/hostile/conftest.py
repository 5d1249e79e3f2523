"""The hostile suite measures the sandbox's own limits: it runs them unscaled (see tests/conftest.py)."""
import pytest

from autograder.grader import engine
from autograder.public import client


@pytest.fixture(autouse=True)
def unscaled_time_limits(monkeypatch):
    monkeypatch.setattr(client, "TIME_SCALE", 1.0)
    monkeypatch.setattr(engine, "TIME_SCALE", 1.0)
