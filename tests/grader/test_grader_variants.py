"""Meta-tests: the grader tells right from wrong. Each buggy variant of the reference loses points in its
part; each correct alternative keeps full marks, training included. Parts are graded by separate workers
that load only their own module, so a variant can only touch its own part's checks. A bug that property
checks already catch is graded without the (slow) training check, unless the variant says training is
what catches it.

The student handout (tests/handout_env.py) checks every other variant's module too (in_handout_sample): each public
check's verdict and message there equal the grader's on the same cases (the check's public round, before the
grader's own cases).

The same grades say which bugs escape the public checks: every public check passes on the cases a student's `check`
runs, yet the grade is below full marks. Those must be listed, with the reason, in tests/meta/escapes.py.

A variant that gets a convention wrong (BLEU's zeros, its closest-length ties) fails the one check that tests the
convention and no other, and loses at most CONVENTION_MOST points (issue #13: the duplicated convention checks cost
4 to 6 of Part 3's 15)."""

import pytest

from autograder.grader.engine import GradeOptions, grade
from tests.handout_env import in_handout_sample
from tests.meta import escapes
from tests.meta.variants import all_variants, make_submission

VARIANTS = all_variants()
CONVENTION_MOST = 2  # points one wrong convention may cost in its part


@pytest.mark.parametrize("variant", VARIANTS, ids=[f"{v.part}-{v.name}" for v in VARIANTS])
def test_variant_is_graded_as_expected(variant, tmp_path, handout_verdicts_of):
    submission = make_submission(tmp_path / "submission", variant)
    report, rounds = None, None
    if not variant.correct and not variant.convention:
        # A bug that a public check shows on the public round has lost points already: the hidden checks and the
        # grader's own round of cases would add nothing to what this test asserts (a lower total, no escape, the
        # handout's verdicts). Leaving them out skips the second round of every public check that passes. A wrong
        # convention is graded in full: the test asserts that no other check, hidden ones included, tests it.
        report = grade(
            submission,
            GradeOptions(
                parts=(variant.part,),
                public_only=True,
                grader_cases=False,
                training="with" if variant.training else "without",
            ),
        )
        if all(r.passed for r in report.results):
            report = None
        else:
            rounds = {r.name: "passed" if r.passed else r.output for r in report.results}
    if report is None:
        report = grade(
            submission,
            GradeOptions(parts=(variant.part,), training="with" if variant.correct or variant.training else "without"),
        )
        rounds = {r.name: r.public_round for r in report.results if r.visibility == "public"}
    got, out_of = report.part_totals()[variant.part]
    failed = [f"{r.name}: {r.output}" for r in report.results if not r.passed]
    if variant.correct:
        assert got == out_of, f"a correct alternative lost points: {failed}"
    else:
        assert got < out_of, f"the bug '{variant.why}' lost no points in {variant.part}"
        _expect_escape_listed(variant, report, rounds)
        if variant.convention:
            _expect_one_check_tests_the_convention(variant, report)

    assert all(rounds.values()), f"a public check was not run: {rounds}"
    if in_handout_sample(variant):
        assert handout_verdicts_of(variant) == rounds


def escapes_public_checks(report, rounds: dict[str, str]) -> bool:
    """A grade below full marks although every public check passed on the cases a student's `check` runs (`rounds`:
    each public check's verdict there, "passed" or its output)."""
    got, out_of = sum(r.score for r in report.results), sum(r.max_score for r in report.results)
    return all(verdict == "passed" for verdict in rounds.values()) and got < out_of


def _expect_escape_listed(variant, report, rounds: dict[str, str]) -> None:
    key = f"{variant.part}/{variant.name}"
    lost = [f"{r.name} ({r.score:g}/{r.max_score:g})" for r in report.results if not r.passed]
    if escapes_public_checks(report, rounds):
        assert key in escapes.ALLOWED, (
            f"the bug '{variant.why}' passes every public check but loses points in "
            f"{lost}: add a public check that shows it, or list it with the reason in "
            f"tests/meta/escapes.py"
        )
    else:
        assert key not in escapes.ALLOWED, (
            f"{key} no longer escapes the public checks (it fails a public one): "
            f"delete its entry in tests/meta/escapes.py and lower MOST"
        )


def _expect_one_check_tests_the_convention(variant, report) -> None:
    """The convention variant loses points in variant.convention only, and at most CONVENTION_MOST (the points come
    from the rubric, through the report)."""
    lost = {r.name: r.max_score - r.score for r in report.results if not r.passed}
    assert set(lost) == {variant.convention}, (
        f"the wrong convention '{variant.why}' must cost the points of {variant.convention} only, it fails "
        f"{sorted(lost)}: leave the corpora where the convention decides a score out of the other checks"
    )
    assert sum(lost.values()) <= CONVENTION_MOST, (
        f"the wrong convention '{variant.why}' costs {sum(lost.values()):g} points, more than {CONVENTION_MOST}: {lost}"
    )


def test_the_escape_list_names_buggy_variants_with_reasons_and_does_not_grow():
    buggy = {f"{v.part}/{v.name}" for v in VARIANTS if not v.correct}
    assert set(escapes.ALLOWED) <= buggy, f"not a buggy variant: {sorted(set(escapes.ALLOWED) - buggy)}"
    assert all(reason.strip() for reason in escapes.ALLOWED.values()), "every allowed escape needs its reason"
    assert len(escapes.ALLOWED) <= escapes.MOST


ESTIMATOR_BUGS = {"loss_has_the_wrong_sign": "look score 0.0", "log_prob_is_detached": "look score 0.1"}


@pytest.mark.parametrize("name", sorted(ESTIMATOR_BUGS))
def test_an_estimator_bug_fails_the_trained_hard_attention_check(name, tmp_path):
    """The two estimator bugs the captions cannot show (docs/thresholds.md): the look policy, trained by the
    submission's REINFORCE alone, looks away from the object (a wrong sign) or never learns (a detached
    log-probability), and the training check says so by its look score."""
    (variant,) = [v for v in VARIANTS if v.part == "reinforce" and v.name == name]
    report = grade(
        make_submission(tmp_path / "submission", variant), GradeOptions(parts=("reinforce",), training="only")
    )
    (trained,) = [r for r in report.results if r.name == "trained_hard_attention_reaches_the_threshold"]
    assert not trained.passed and ESTIMATOR_BUGS[name] in trained.output, trained.output
    assert "did not learn to look at that object" in trained.output
