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
