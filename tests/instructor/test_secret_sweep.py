"""`python -m instructor secret-sweep`: the reference graded under fresh test secrets, every lost point reported."""

import argparse
import types

import pytest

from autograder.grader import engine
from autograder.grader.checks import checks_of
from autograder.grader.context import GradingContext
from instructor import secret_sweep
from tests.meta.variants import all_variants, make_submission


def test_each_secret_draws_its_own_cases(tmp_path):
    a, b = (
        GradingContext(tmp_path / name, test_secret=s) for name, s in (("a", "0" * 31 + "1"), ("b", "0" * 31 + "2"))
    )
    chk = checks_of("bleu")[0]
    assert a.test_secret == 1 and b.test_secret == 2
    assert engine.grader_round(a, chk).seed != engine.grader_round(b, chk).seed


def test_a_secret_of_the_wrong_length_is_refused(tmp_path):
    with pytest.raises(ValueError, match="32 hex digits"):
        GradingContext(tmp_path, test_secret="abc")


def test_a_lost_point_is_reported_with_its_case_and_exits_1(tmp_path, capsys):
    variant = next(v for v in all_variants() if v.name == "closest_length_tie_goes_to_the_first_reference")
    submission = make_submission(tmp_path / "submission", variant)
    args = argparse.Namespace(secrets=1, part=["bleu"], submission=str(submission))
    assert secret_sweep.run(args) == 1
    out = capsys.readouterr().out
    assert "1 check lost points" in out
    assert "bleu.closest_length_ties_go_to_the_shorter_reference (public): 0 / 2" in out
    assert "refs=[[" in out  # the failing case


def test_each_secret_is_reported_as_soon_as_its_grade_ends(tmp_path, monkeypatch, capsys):
    """A sweep of ten secrets takes minutes: the line of one secret is printed before the next grade starts."""
    printed_before_each_grade = []

    def grade(submission, options, ctx):
        printed_before_each_grade.append(capsys.readouterr().out)
        return types.SimpleNamespace(results=[])

    monkeypatch.setattr(engine, "grade", grade)
    assert secret_sweep.run(argparse.Namespace(secrets=2, part=None, submission=str(tmp_path))) == 0
    first, second = printed_before_each_grade
    assert first == "" and second.startswith("secret ") and second.rstrip().endswith(": every point")
