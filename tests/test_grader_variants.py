"""Meta-tests: the grader tells right from wrong. Each buggy variant of the reference loses points in its
part; each correct alternative keeps full marks, training included. Parts are graded by separate workers
that load only their own module, so a variant can only touch its own part's checks. A bug that property
checks already catch is graded without the (slow) training check, unless the variant says training is
what catches it.

The student handout (tests/handout_env.py) checks the same module too: each public check's verdict and message
there equal the grader's on the same cases (the check's public round, before the grader's own cases)."""
import pytest

from autograder.grader.engine import grade
from tests.meta.variants import all_variants, make_submission

VARIANTS = all_variants()


@pytest.mark.parametrize("variant", VARIANTS, ids=[f"{v.part}-{v.name}" for v in VARIANTS])
def test_variant_is_graded_as_expected(variant, tmp_path, handout_verdicts_of):
    submission = make_submission(tmp_path / "submission", variant)
    report = grade(submission, parts=(variant.part,), skip_training=not (variant.correct or variant.training))
    got, out_of = report.part_totals()[variant.part]
    failed = [f"{r.name}: {r.output}" for r in report.results if not r.passed]
    if variant.correct:
        assert got == out_of, f"a correct alternative lost points: {failed}"
    else:
        assert got < out_of, f"the bug '{variant.why}' lost no points in {variant.part}"

    graders = {r.name: r.public_round for r in report.results if r.visibility == "public"}
    assert all(graders.values()), f"a public check was not run: {graders}"
    assert handout_verdicts_of(variant) == graders
