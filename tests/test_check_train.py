"""`python -m autograder check --train`: the training checks' runs on the public data, each score next to its
published threshold, with the lab's image controls (zeroed and shuffled image features)."""
import re
from pathlib import Path

import pytest

from autograder.__main__ import main as kit
from autograder.grader.training import SPECS, public_table
from autograder.public.runner import CheckResult, GradeReport

ROOT = Path(__file__).resolve().parents[1]
LINE = re.compile(r"show_and_tell: exact match (\S+) \(threshold 0\.4\): reaches the threshold; image controls "
                  r"\(should collapse\): zeroed images (\S+), shuffled images (\S+)$")
RECALL = re.compile(r"    recall@1 (\S+) \(threshold (\S+)\): reaches the threshold$")


def test_check_train_trains_one_part_on_the_public_data_and_the_image_controls_collapse(capsys):
    """The reference of Part 1 (the cheapest trained part) reaches its threshold on the public data; with its image
    features zeroed or each scene's taken from another scene, its exact match collapses (the lab's controls). The
    line below it: the trained model's recall@1 by retrieval_scores (the reply check) beside its threshold."""
    assert kit(["check", str(ROOT / "solutions"), "--part", "show_and_tell", "--train"]) == 0
    lines = capsys.readouterr().out.splitlines()
    found = [m for line in lines if (m := LINE.match(line))]
    assert len(found) == 1, lines
    score, zeroed, shuffled = (float(x) for x in found[0].groups())
    assert score >= SPECS["show_and_tell"].threshold
    assert zeroed < 0.1 and shuffled < 0.1, (zeroed, shuffled)
    recall = [m for line in lines if (m := RECALL.match(line))]
    assert len(recall) == 1, lines
    assert float(recall[0][1]) >= float(recall[0][2]) == SPECS["show_and_tell"].reply_checks[0].threshold


def test_check_train_names_the_trained_parts_when_none_is_asked_for(capsys):
    with pytest.raises(SystemExit) as exit_:
        kit(["check", str(ROOT / "solutions"), "--part", "bleu", "--train"])
    assert exit_.value.code == 2
    assert "none of the trained parts' modules (show_and_tell.py, " in capsys.readouterr().err


def _result(part: str, passed: bool, output: str) -> CheckResult:
    return CheckResult(part, SPECS[part].check, "1.1", "", float(passed), 1.0, "hidden", output, 1.0)


def test_the_table_says_which_run_fails_and_why():
    report = GradeReport()
    report.results = [_result("show_and_tell", False, "exact match 0.120, threshold 0.4"),
                      _result("lstm_a", False, "the worker raised ValueError: bad shape")]
    report.artifacts = {"show_and_tell": {"public scores": {"score": 0.12, "zeroed": 0.0, "shuffled": None}}}
    lines = public_table(report, ("show_and_tell", "lstm_a")).splitlines()
    threshold = SPECS["show_and_tell"].reply_checks[0].threshold
    assert lines == ["show_and_tell: exact match 0.120 (threshold 0.4): FAILS; image controls (should collapse): "
                     "zeroed images 0.000, shuffled images -",
                     f"    recall@1: - (threshold {threshold}): nothing to score in the run's reply",
                     "lstm_a: FAILS: the worker raised ValueError: bad shape"]
    report.artifacts["show_and_tell"]["public trained_show_and_tell_retrieves_the_right_image"] = 0.015
    assert public_table(report, ("show_and_tell",)).splitlines()[1] == \
        f"    recall@1 0.015 (threshold {threshold}): FAILS"
