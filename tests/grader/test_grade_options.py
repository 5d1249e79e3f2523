"""engine.GradeOptions: what a grade runs, validated where it is made."""

import pytest

from autograder.grader import rubric as rubric_mod
from autograder.grader.checks import checks_of
from autograder.grader.engine import GradeOptions, _graded_checks
from shared.parts import MODULES


@pytest.mark.parametrize(
    "kwargs, named",
    [({"training": "sometimes"}, "training"), ({"parts": ("bleux",)}, "parts"), ({"time_limit": 0}, "time_limit")],
)
def test_a_bad_option_names_itself(kwargs, named):
    with pytest.raises(ValueError, match=f"^{named}: expected"):
        GradeOptions(**kwargs)


@pytest.mark.parametrize("part", MODULES)
def test_the_options_choose_the_checks_of_a_part(part):
    entries = rubric_mod.load()[part]
    every = [c for c in checks_of(part) if c.name in entries]
    public = [c for c in every if entries[c.name].visibility == "public"]

    def chosen(**kwargs):
        return _graded_checks(part, entries, GradeOptions(**kwargs))

    assert chosen() == every
    assert chosen(public_only=True) == public
    assert chosen(training="without") == [c for c in every if not c.training]
    assert chosen(training="only") == [c for c in every if c.training]
    assert chosen(training="only", public_only=True) == [c for c in public if c.training]
