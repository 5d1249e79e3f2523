"""What a student reads when a public check fails, on the variants that trigger each message: token ids beside
their words and "after END" (Part 2), an unbiased but noisier estimator told from a biased one (Part 5), the line
that weighs a failure against the rest of the grade, and the table of docs/grader.md (variant -> message)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from autograder.public.checker import check
from autograder.public.score_table import table
from benchmarks.variant_messages import NOT_CAUGHT, buggy_variants, row, rows_in_doc
from tests.meta.variants import all_variants, make_submission

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {v.name: v for v in all_variants()}


SCRATCH: list[Path] = []  # the module's scratch folder (the fixture below), where each variant is checked once


@pytest.fixture(scope="module", autouse=True)
def scratch(tmp_path_factory):
    SCRATCH[:] = [tmp_path_factory.mktemp("messages")]
    yield
    _checked.cache_clear()


@cache
def _checked(name: str, part: str):
    """The public `check` report of variant `name` ("": the reference), its part only."""
    folder = SCRATCH[0] / (name or "reference")
    submission = make_submission(folder / "submission", VARIANTS[name] if name else None)
    return check(submission, (part,), scratch=folder)


def _output(name: str, part: str, check_name: str) -> str:
    (result,) = [r for r in _checked(name, part).results if r.name == check_name]
    return "passed" if result.passed else result.output


def test_decoding_shows_tokens_as_words_and_names_a_difference_after_end():
    message = _output("greedy_without_pad_after_end", "decoding", "greedy_matches_argmax_decoding")
    assert 'got 2 "<end>", expected 0 "<pad>"' in message, message
    assert "(after END: the expected caption ended at step 0, so every later token is PAD)" in message, message
    assert 'got "<end> <end>" (ids [2, 2]), expected "<end> <pad>" (ids [2, 0])' in message, message
    # the same words in beam search's messages
    beam = _output("beam_forgets_to_reorder_the_state", "decoding", "beam_scores_are_sorted_log_probabilities")
    assert 'its tokens "a a a" (ids [3, 3, 3])' in beam, beam


def test_a_missing_baseline_is_reported_as_higher_variance_and_a_wrong_sign_as_bias():
    check_name = "reinforce_is_unbiased_on_six_locations"
    for name in ("loss_ignores_the_baseline", "loss_adds_the_baseline"):
        message = _output(name, "reinforce", check_name)
        assert "higher variance, not bias" in message and "biased" not in message, (name, message)
        assert "and with no baseline at all" in message, message
    wrong_sign = _output("loss_has_the_wrong_sign", "reinforce", check_name)
    assert "biased: the mean of 20000 score-function estimates differs" in wrong_sign, wrong_sign
    assert "variance" not in wrong_sign, wrong_sign
    assert _output("", "reinforce", check_name) == "passed"


def test_a_failed_public_check_says_what_else_of_the_grade_runs_its_functions():
    lines = table(_checked("greedy_without_pad_after_end", "decoding")).splitlines()
    failed = next(i for i, line in enumerate(lines) if "FAIL" in line and "greedy_matches_argmax_decoding" in line)
    weighing = [line.strip() for line in lines[failed + 1 :] if not line.startswith("    2.")][:2]
    assert weighing[-1] == (
        "the same function (greedy_decode) is also graded by 1 hidden check worth 1 point and 0 "
        "training checks after the deadline"
    ), lines
    beam = table(_checked("beam_forgets_to_reorder_the_state", "decoding"))
    assert (
        "the same function (beam_search) is also graded by 3 hidden checks worth 5 points and 0 training checks" in beam
    ), beam
    assert "is also graded by" not in table(_checked("", "decoding"))  # nothing failed, nothing weighed


def test_the_public_rubric_counts_the_hidden_and_training_checks_of_each_function_and_is_current():
    from autograder.grader import rubric
    from instructor.notebooks import public_rubric_text

    assert (ROOT / "autograder/public/rubric.json").read_text() == public_rubric_text(), (
        "run `python -m instructor notebooks`"
    )
    shipped = json.loads(public_rubric_text())["parts"]
    beam = shipped["decoding"]["checks"]["beam_width_one_is_greedy"]
    # wide_beam_is_exhaustive_search, beam_batch_items_are_independent, decoders_leave_their_inputs_unchanged
    entries = rubric.load()["decoding"]
    hidden = (
        "wide_beam_is_exhaustive_search",
        "beam_batch_items_are_independent",
        "decoders_leave_their_inputs_unchanged",
    )
    assert (beam["functions"], beam["hidden_checks"], beam["hidden_points"], beam["training_checks"]) == (
        ["beam_search"],
        3,
        sum(entries[h].points for h in hidden),
        0,
    )
    # relu_rnn_step runs inside ShowTellRNN: the training checks of Part 1 run it too
    relu = shipped["show_and_tell"]["checks"]["relu_rnn_step_matches_rnn_cell"]
    assert relu["training_checks"] == 2 and relu["training_points"] > 0, relu
    # only counts and points: no hidden check's name reaches the handout
    hidden_names = {n for part, spec in rubric.load().items() for n, e in spec.items() if e.visibility == "hidden"}
    assert not any(f'"{name}"' in public_rubric_text() for name in hidden_names)


def test_every_buggy_variant_has_a_row_in_the_table_of_messages():
    assert set(rows_in_doc()) == {v.name for v in buggy_variants()}, "run benchmarks/variant_messages.py --write"


@pytest.mark.parametrize(
    "name", ["greedy_without_pad_after_end", "loss_ignores_the_baseline", "no_clipping", "input_weight_through_data"]
)
def test_rows_of_the_table_of_messages_are_current(name, tmp_path):
    assert rows_in_doc()[name] == row(VARIANTS[name], tmp_path), "run benchmarks/variant_messages.py --write"
    if name == "input_weight_through_data":  # an escape: listed as such
        assert NOT_CAUGHT in rows_in_doc()[name]
