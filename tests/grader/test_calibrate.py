"""`python -m autograder.grader.calibrate`: the table thresholds are chosen from, and each run's verdict.

A toy spec stands in for the trained parts (a real calibration trains each reference for minutes): its score is the
training seed / 10, and its verdict fails seed +1, so the table's numbers and the failure report are known."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn

from autograder.grader import calibrate
from autograder.grader.training import TrainingSpec
from autograder.public.compare import CheckFailed
from autograder.public.published_training import Published


class ToyContext:
    """What calibrate needs of a GradingContext: the hidden seed, and data it may load (the toy's verdict reads no
    test scenes)."""

    seed = 0
    data = SimpleNamespace(test=SimpleNamespace(scenes=None))

    def __init__(self, scratch):
        pass


def toy_verdict(published, out, test, where) -> None:
    if out["seed"] == 1:
        raise CheckFailed("the style did not switch")


class ToyModel(nn.Module):
    def __init__(self, seed: int):
        super().__init__()
        self.seed = seed


TOY = TrainingSpec(
    part="toy",
    check="trained_toy",
    description="",
    published=Published(
        "toy",
        epochs=1,
        batch_size=1,
        lr=0.1,
        threshold=0.05,
        score=lambda out, test: out["seed"] / 10,
        verdict=toy_verdict,
    ),
    train_reference=lambda ctx, seed, epochs, prepared: ToyModel(seed),
    reference_reply=lambda model, ctx: {"seed": model.seed},
)


def run(monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    monkeypatch.setattr(calibrate, "SPECS", {"toy": TOY})
    monkeypatch.setattr(calibrate, "GradingContext", ToyContext)
    threads = torch.get_num_threads()
    try:
        status = calibrate.main(["--part", "toy", *argv])
    finally:
        torch.set_num_threads(threads)
    return status, capsys.readouterr().out


def test_each_seed_s_score_and_the_spread_are_printed_and_a_failed_verdict_fails_the_run(monkeypatch, capsys):
    status, out = run(monkeypatch, capsys, "--seeds", "2")
    assert "| toy | 0.000 | 0.100 | 0.000 | 0.050 | 0.071 | 0.05 |" in out, out
    assert status == 1 and "FAIL on toy seed +1: the style did not switch" in out, out


def test_first_offsets_the_seeds_and_a_run_whose_verdicts_pass_exits_0(monkeypatch, capsys):
    status, out = run(monkeypatch, capsys, "--seeds", "1", "--first", "2", "--threads", "2")
    assert "training seeds +2 .. +2; 2 threads" in out and "| toy | 0.200 |" in out, out
    assert status == 0 and "pass on every seed" in out, out
