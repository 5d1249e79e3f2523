"""One time-limit model (autograder/public/limits.py): every knob in TimeLimits, overridable by the environment
variables the kit has always read, no check's limit above its part's, and the earliest deadline of a call wins
with its own message."""
import dataclasses
import time

import pytest

from autograder.grader.checks import all_checks
from autograder.public import checks as registry
from autograder.public import limits
from autograder.public.limits import Deadline, TimeLimits, earliest, part_deadline
from autograder.public.runner import WithinCheck


def test_the_environment_overrides_the_scale_and_the_submission_limit():
    config = TimeLimits.from_environment({"CAPTIONKIT_TIME_SCALE": "4", "CAPTIONKIT_SUBMISSION_TIME_LIMIT": "120"})
    assert (config.scale, config.submission) == (4.0, 120.0)
    assert config.seconds(config.part) == 1200.0
    assert TimeLimits.from_environment({}) == TimeLimits()


@pytest.mark.parametrize("variable, value", [("CAPTIONKIT_TIME_SCALE", "fast"), ("CAPTIONKIT_TIME_SCALE", "0"),
                                             ("CAPTIONKIT_SUBMISSION_TIME_LIMIT", "-5")])
def test_a_bad_setting_names_its_variable_or_field(variable, value):
    with pytest.raises(ValueError, match=r"CAPTIONKIT_TIME_SCALE|scale|submission"):
        TimeLimits.from_environment({variable: value})


def test_no_registered_check_has_a_limit_above_its_parts():
    checks = all_checks()
    assert checks and all(0 < c.timeout <= limits.LIMITS.part for part in checks.values() for c in part)


def test_a_check_with_a_limit_above_its_parts_is_refused_at_registration():
    with pytest.raises(ValueError, match=r"timeout=600 s; .* at most the part's time limit \(300 s\)"):
        @registry.check(timeout=600, part="no_such_part")
        def too_long(student, ctx):
            """never registered"""
    assert registry.registered("no_such_part") == []


class _Recorder:
    """A worker stand-in that records the deadline each call is given."""
    deadline = None

    def __init__(self):
        self.calls = []

    def call(self, recipe, timeout=None, deadline=None, **kwargs):
        self.calls.append((recipe, timeout, deadline, kwargs))
        return "ok"


def test_every_call_of_a_check_is_passed_the_checks_deadline():
    worker, deadline = _Recorder(), Deadline.after(30.0, "the check's time limit was reached")
    assert WithinCheck(worker, deadline).call("bleu.corpus_bleu", timeout=10.0, hyps=[]) == "ok"
    assert worker.calls == [("bleu.corpus_bleu", 10.0, deadline, {"hyps": []})]


def test_the_earliest_deadline_wins_with_its_message():
    part = part_deadline()
    check = Deadline.after(1.0, "the check's time limit was reached")
    assert earliest(None, part, check) is check and earliest(None) is None
    assert abs(part.left() - limits.LIMITS.seconds(limits.LIMITS.part)) < 5
    ends_by = time.monotonic() + 2.0
    assert part_deadline(ends_by).at == ends_by
    assert part_deadline(ends_by).reached == "the submission's time limit was reached"   # the limit that ends it
    assert part_deadline(ends_by + 10 ** 6).reached == "the part's time limit was reached"


def test_limits_are_read_when_used(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, part=7.0, scale=2.0))
    assert 13.0 < part_deadline().left() <= 14.0


# Training budgets: every reference is timed in a forked copy of the grader (GradingContext.budget), all of them in
# one timing host that pays the optimizers' first-use import once (GradingContext.time_references).

def _pause(seconds: float) -> None:
    time.sleep(seconds)


def test_references_timed_together_keep_each_budget_and_count_the_shared_import_in_each(tmp_path):
    from autograder.grader.context import GradingContext

    ctx = GradingContext(tmp_path)
    ctx.__dict__["data"] = None   # the timings below need no data set
    ran_here = []
    ctx.time_references([lambda c: c.budget("a", lambda: ran_here.append(_pause(0.2)), scale=3),
                         lambda c: c.budget("b", _pause, setup=lambda: 0.1)],
                        first_use=lambda: 0.5)
    seconds = ctx.reference_seconds
    assert ran_here == [], "a reference was timed in the grading process itself, not in a forked copy"
    assert set(seconds) == {"a", "b"}
    assert 3 * (0.2 + 0.5) <= seconds["a"] < 3 * (0.2 + 0.5) + 3, seconds   # the import counted in every run, scaled
    assert 0.1 + 0.5 <= seconds["b"] < 0.1 + 0.5 + 1, seconds
    assert ctx.budget("a", lambda: pytest.fail("timed twice")) == \
        limits.LIMITS.budget_factor * seconds["a"] + limits.LIMITS.budget_allowance


def test_a_reference_that_fails_to_time_is_left_to_its_check_and_the_others_are_kept(tmp_path, capfd):
    from autograder.grader.context import GradingContext

    def broken():
        raise RuntimeError("the reference broke")

    ctx = GradingContext(tmp_path)
    ctx.__dict__["data"] = None
    ctx.time_references([lambda c: c.budget("broken", broken), lambda c: c.budget("fine", lambda: None)],
                        first_use=lambda: 0.0)
    assert set(ctx.reference_seconds) == {"fine"}
    assert "the reference broke" in capfd.readouterr().err
    with pytest.raises(RuntimeError, match="timing run failed"):   # the check times it again and reports it
        ctx.budget("broken", broken)
