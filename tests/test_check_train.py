"""`python -m autograder check --train`: the training checks' runs on the public data, each score next to its
published threshold, with the lab's image controls (zeroed and shuffled image features), through the path the
student handout's `check --train` takes (autograder/public/training.py; the handout's own run: tests/test_handout.py)."""
import ast
import re
from pathlib import Path

import pytest

from autograder.__main__ import main as kit
from autograder.grader.engine import REFERENCES
from autograder.grader.training import SPECS
from autograder.public.training import OTHER_PARTS, PUBLISHED, PublicRun, table
from shared.parts import MODULES

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


def test_the_table_says_which_run_fails_and_why():
    threshold = SPECS["show_and_tell"].reply_checks[0].threshold
    runs = [PublicRun("show_and_tell", False, 0.12, {"zeroed": 0.0, "shuffled": None},
                      "exact match 0.120 on the public test scenes; the threshold is 0.4",
                      recall_failure="retrieval_scores on the trained model raised ValueError: bad k"),
            PublicRun("lstm_a", False, failure="your code raised ValueError: bad shape")]
    assert table(runs).splitlines() == [
        "show_and_tell: exact match 0.120 (threshold 0.4): FAILS; image controls (should collapse): "
        "zeroed images 0.000, shuffled images -",
        "    exact match 0.120 on the public test scenes; the threshold is 0.4",
        f"    recall@1: - (threshold {threshold}): retrieval_scores on the trained model raised ValueError: bad k",
        "lstm_a: FAILS: your code raised ValueError: bad shape"]
    passed = PublicRun("show_and_tell", False, 0.5, {"zeroed": 0.0, "shuffled": 0.01}, recall=0.015)
    assert table([passed]).splitlines()[1] == f"    recall@1 0.015 (threshold {threshold}): FAILS"
    # The handout's runs use the student's own modules of the other parts: a failed run says so.
    assert table(runs, own_parts=True).splitlines()[-1] == (
        "    this run used your own decoding.py and show_and_tell.py, where the grader uses the reference versions: a "
        "bug there can be the cause")
    # ... and a run that never started (a module it uses is missing) is one line.
    missing = PublicRun("show_and_tell", False, failure="decoding.py is missing from the folder", started=False)
    assert table([missing], own_parts=True) == "show_and_tell: FAILS: decoding.py is missing from the folder"


def test_the_grader_reads_what_is_published():
    """Each training check's budget, threshold and metric are the published ones (autograder/public/training.py),
    read, not repeated; so are its reply checks'."""
    assert set(SPECS) == set(PUBLISHED)
    for part, spec in SPECS.items():
        assert spec.published is PUBLISHED[part]
        assert (spec.epochs, spec.batch_size, spec.lr, spec.threshold, spec.metric) == (
            PUBLISHED[part].epochs, PUBLISHED[part].batch_size, PUBLISHED[part].lr, PUBLISHED[part].threshold,
            PUBLISHED[part].metric)
        assert [extra.published for extra in spec.reply_checks] == \
            ([PUBLISHED[part].retrieval] if PUBLISHED[part].retrieval else [])


def test_the_other_parts_each_recipe_uses_are_the_published_ones():
    """OTHER_PARTS (what a part's worker holds beside the student's module: the references in a grade, the student's
    own modules in the handout's check --train) names exactly the parts whose module the part's recipes ask for
    (`reference("...")` in autograder/worker/recipes/<part>.py)."""
    assert REFERENCES is OTHER_PARTS and set(OTHER_PARTS) == set(MODULES)
    for part in MODULES:
        source = (ROOT / "autograder" / "worker" / "recipes" / f"{part}.py").read_text()
        asked = {node.args[0].value for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "reference"}
        assert asked == set(OTHER_PARTS[part]), part
