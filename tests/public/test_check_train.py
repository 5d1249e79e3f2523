"""`python -m autograder check --train` and the handout's `python -m autograder.public check --train`: the
training checks' runs on the public data, each score next to its published threshold, the epochs trained, and the
lab's image controls (zeroed and shuffled image features) beside what a model that reads the image reaches there,
through one path (autograder/public/training.py, its table autograder/public/training_report.py)."""

import ast
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder.__main__ import main as kit
from autograder.grader.engine import REFERENCES
from autograder.grader.training import SPECS
from autograder.public.progress import Lines
from autograder.public.published_training import PUBLISHED
from autograder.public.training import CONTROLS, OTHER_PARTS, EpochsTrained, PublicRun
from autograder.public.training_report import CONTROL_NAMES, CONTROLS_EXPECTED, table
from instructor import handout
from shared.parts import BY_MODULE, MODULES
from tests.handout_env import CHECK_TIMEOUT, student_env

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"show_and_tell: exact match (\S+) \(threshold 0\.4\): reaches the threshold$")
CONTROL = re.compile(r"        (zeroed images|shuffled images \(each scene given another's\)): \S+ \S+ (\S+) ")
RECALL = re.compile(r"    recall@1 (\S+) \(threshold (\S+)\): reaches the threshold$")


def test_check_train_trains_one_part_on_the_public_data_and_the_image_controls_collapse(capsys):
    """The reference of Part 1 (the cheapest trained part) reaches its threshold on the public data; with its image
    features zeroed or each scene's taken from another scene, its exact match collapses (the lab's controls). The
    line below it: the trained model's recall@1 by retrieval_scores (the reply check) beside its threshold."""
    assert kit(["check", str(ROOT / "solutions"), "--part", "show_and_tell", "--train"]) == 0
    lines = capsys.readouterr().out.splitlines()
    found = [m for line in lines if (m := LINE.match(line))]
    assert len(found) == 1, lines
    assert float(found[0][1]) >= SPECS["show_and_tell"].threshold
    controls = {m[1]: float(m[2]) for line in lines if (m := CONTROL.match(line))}
    assert list(controls) == [CONTROL_NAMES[name] for name in CONTROLS], lines
    assert all(value < 0.1 for value in controls.values()), controls
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
    runs = [
        PublicRun(
            "show_and_tell",
            False,
            0.12,
            {"zeroed": 0.0, "shuffled": None},
            "exact match 0.120 on the public test scenes; the threshold is 0.4",
            recall_failure="retrieval_scores on the trained model raised ValueError: bad k",
            epochs=EpochsTrained(12, 12),
        ),
        PublicRun("lstm_a", False, failure="your code raised ValueError: bad shape"),
    ]
    assert table(runs).splitlines() == [
        "show_and_tell: exact match 0.120 (threshold 0.4): FAILS",
        "    exact match 0.120 on the public test scenes; the threshold is 0.4",
        "    trained all 12 epochs",
        "    image controls (the same model, the same test scenes; they do not count in the verdict):",
        "        zeroed images: exact match 0.000 (expected near 0 for a model that reads the image: every word of "
        "these captions depends on the image)",
        "        shuffled images (each scene given another's): exact match - (expected near 0 for a model that reads "
        "the image: the model captions the other scene)",
        f"    recall@1: - (threshold {threshold}): retrieval_scores on the trained model raised ValueError: bad k",
        "lstm_a: FAILS: your code raised ValueError: bad shape",
    ]
    passed = PublicRun("show_and_tell", False, 0.5, {"zeroed": 0.0, "shuffled": 0.01}, recall=0.015)
    assert table([passed]).splitlines()[-1] == f"    recall@1 0.015 (threshold {threshold}): FAILS"
    # The handout's runs use the student's own modules of the other parts: a failed run says so.
    assert table(runs, own_parts=True).splitlines()[-1] == (
        "    this run used your own decoding.py and show_and_tell.py, where the grader uses the reference versions: a "
        "bug there can be the cause"
    )
    # ... and a run that never started (a module it uses is missing) is one line.
    missing = PublicRun("show_and_tell", False, failure="decoding.py is missing from the folder", started=False)
    assert table([missing], own_parts=True) == "show_and_tell: FAILS: decoding.py is missing from the folder"


def test_the_grader_reads_what_is_published():
    """Each training check's budget, threshold and metric are the published ones
    (autograder/public/published_training.py), read, not repeated; so are its reply checks'."""
    assert set(SPECS) == set(PUBLISHED)
    for part, spec in SPECS.items():
        assert spec.published is PUBLISHED[part]
        assert (spec.epochs, spec.batch_size, spec.lr, spec.threshold, spec.metric) == (
            PUBLISHED[part].epochs,
            PUBLISHED[part].batch_size,
            PUBLISHED[part].lr,
            PUBLISHED[part].threshold,
            PUBLISHED[part].metric,
        )
        assert [extra.published for extra in spec.reply_checks] == (
            [PUBLISHED[part].retrieval] if PUBLISHED[part].retrieval else []
        )


def test_the_other_parts_each_recipe_uses_are_the_published_ones():
    """OTHER_PARTS (what a part's worker holds beside the student's module: the references in a grade, the student's
    own modules in the handout's check --train) names exactly the parts whose module the part's recipes ask for
    (`reference("...")` in autograder/worker/recipes/<part>.py)."""
    assert REFERENCES is OTHER_PARTS and set(OTHER_PARTS) == set(MODULES)
    for part in MODULES:
        source = (ROOT / "autograder" / "worker" / "recipes" / f"{part}.py").read_text()
        asked = {
            node.args[0].value
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "reference"
        }
        assert asked == set(OTHER_PARTS[part]), part


def test_a_run_says_where_it_stopped_and_starts_counting_again_when_it_starts_over():
    """The epochs line: a run the threshold stopped says at which epoch of how many; a run started over (the kit's,
    stopped at its least budget) forgets where its first attempt stopped."""
    epochs = EpochsTrained()
    judge = epochs.judged(lambda epoch, of, tokens: epoch == 3)
    for epoch in (1, 2, 3):
        epochs.reported(epoch, 12)
        judge(epoch, 12, None)
    assert (epochs.last, epochs.of, epochs.stopped_at) == (3, 12, 3)
    assert str(epochs).startswith(
        "training stopped early, after epoch 3 of 12: its captions reached the threshold "
        "there, and the grader stops its runs the same way"
    )
    epochs.reported(1, 12)
    assert (epochs.last, epochs.stopped_at) == (1, None) and str(epochs) == "trained 1 of 12 epochs"


def test_every_trained_part_publishes_what_each_control_should_reach():
    assert set(CONTROLS_EXPECTED) == set(PUBLISHED)
    for part, expected in CONTROLS_EXPECTED.items():
        assert set(expected) == set(CONTROLS), part
        assert all(0 <= e.low <= e.high <= 1 and e.words and e.why for e in expected.values()), part


def test_the_progress_line_of_a_training_run_is_no_score():
    """A training run earns no points: its progress line says how it ended, not "1 / 1"."""
    stream = io.StringIO()
    lines = Lines(stream)
    lines.part(1, 1, "show_and_tell", 1)
    lines.run_done("reached the threshold at epoch 9 of 12")
    assert re.fullmatch(
        r"\[1/1\] Part 1 show_and_tell: reached the threshold at epoch 9 of 12 \(\d+ s\)\n", stream.getvalue()
    )


@pytest.mark.parametrize("part", ["show_and_tell", "stylenet"])
def test_the_handouts_check_train_shows_the_score_the_epochs_and_what_each_control_should_reach(
    part, built, student_python, tmp_path
):
    """`check --train --part PART` in the student handout on the references: the first line carries the final
    metric beside the threshold, the next says where the run stopped (or that it trained every epoch), then each
    image control's score beside what a model that reads the image reaches (CONTROLS_EXPECTED), and the score falls
    in that expectation's range: the published expectation is the reference's real behaviour (StyleNet's shuffled
    images stay at about 0.44, its zeroed ones fall to 0). The progress line on stderr says how the run ended without
    points; the last line speaks of the grader's runs, not of the checker's files."""
    from shared.encoder import cache_dir

    published = PUBLISHED[part]
    folder = shutil.copytree(built[0], tmp_path / "captioning")
    for module in (part, *OTHER_PARTS[part]):
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder / f"{module}.py")
    env = {k: v for k, v in student_env().items() if k != "CI"}  # CI hides the progress line
    env["CAPTIONKIT_CACHE"] = str(cache_dir())  # the kit's encoder outputs of the public data
    done = subprocess.run(
        [str(student_python), "-m", handout.CHECKER, "check", "--train", "--part", part],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=CHECK_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    metric = re.escape(published.metric)

    first = re.fullmatch(
        rf"{part}: {metric} (\d\.\d{{3}}) \(threshold {published.threshold}\): reaches the "
        rf"threshold",
        lines[0],
    )
    assert first and float(first[1]) >= published.threshold, done.stdout
    if part == "stylenet":  # the rest of its verdict: the factor switches the style
        switch = re.fullmatch(
            r"    style switch: romantic captions' style rate (\S+) \(needs >= 0\.9\), factual "
            r"captions' (\S+) \(needs <= 0\.1\)",
            lines[1],
        )
        assert switch and float(switch[1]) >= 0.9 and float(switch[2]) <= 0.1, done.stdout
        del lines[1]
    stopped = re.fullmatch(
        rf"    training stopped early, after epoch (\d+) of {published.epochs}: its captions "
        rf"reached the threshold there, and the grader stops its runs the same way \(the score is "
        rf"that epoch's model's; more epochs usually raise it\)",
        lines[1],
    )
    assert stopped or lines[1] == f"    trained all {published.epochs} epochs", done.stdout
    assert lines[2] == (
        "    image controls (the same model, the same test scenes; they do not count in the verdict):"
    ), done.stdout
    for line, name in zip(lines[3:5], CONTROLS):
        expected = CONTROLS_EXPECTED[part][name]
        shown = re.fullmatch(
            rf"        {re.escape(CONTROL_NAMES[name])}: {metric} (\d\.\d{{3}}) \(expected "
            rf"{re.escape(expected.words)} for a model that reads the image: "
            rf"{re.escape(expected.why)}\)",
            line,
        )
        assert shown, (name, done.stdout)
        assert expected.low <= float(shown[1]) <= expected.high, (name, shown[1], expected)

    ended = (
        f"reached the threshold at epoch {stopped[1]} of {published.epochs}"
        if stopped
        else f"reached the threshold, {published.epochs} of {published.epochs} epochs trained"
    )
    assert re.fullmatch(rf"\[1/1\] Part {BY_MODULE[part].number} {part}: {ended} \(\d+ s\)\n", done.stderr), done.stderr
    assert lines[-1].startswith(
        "Each run trains with the grader's recipe (epochs, batch size, learning rate) on the "
        "public scenes and, as the grader's does, stops after the first epoch whose captions "
        "reach the threshold."
    ), done.stdout
    assert "autograder" not in done.stdout and "PUBLISHED" not in done.stdout, done.stdout
