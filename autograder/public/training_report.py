"""The lines `check --train` prints (`table`): each part's score on the public test scenes next to its threshold, the
epochs its run trained, and the lab's two image controls beside what a model that reads the image reaches there
(CONTROLS_EXPECTED).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.public.published_training import PUBLISHED
from autograder.public.training import CONTROLS, OTHER_PARTS, PublicRun

# -- what the image controls show of a model that reads the image ------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """What a trained model that reads the image reaches under one image control, in its part's metric: `words` as
    a student reads them ("near 0"), the range [low, high] the reference's run on the public data falls in, and why."""

    words: str
    low: float
    high: float
    why: str


NEAR_0_WITHOUT_THE_IMAGE = Expected("near 0", 0.0, 0.05, "every word of these captions depends on the image")
NEAR_0_WITH_ANOTHER_IMAGE = Expected("near 0", 0.0, 0.05, "the model captions the other scene")

# The reference's runs on the public data (`check --train`, training seed 0, zeroed then shuffled): Show and Tell
# 0.005, 0.010; soft attention 0.010, 0.007; REINFORCE 0.010, 0.007; LSTM-A A4 0.010, 0.010 (exact match); StyleNet
# 0.000, 0.436 (factual content slots). StyleNet's five slots take few values each: another scene's caption shares
# a slot's word with this one's by chance about 0.44 of the time, what a model trained without the image reaches on
# the hidden scenes (0.440); with zeroed features it gets no slot right.
CONTROLS_EXPECTED = {
    **{
        part: {"zeroed": NEAR_0_WITHOUT_THE_IMAGE, "shuffled": NEAR_0_WITH_ANOTHER_IMAGE}
        for part in ("show_and_tell", "attention", "reinforce", "lstm_a")
    },
    "stylenet": {
        "zeroed": Expected("near 0", 0.0, 0.05, "without an image it gets none of the scene's content words right"),
        "shuffled": Expected(
            "about 0.44",
            0.38,
            0.50,
            "the captions describe another scene, whose content words "
            "match this scene's by chance about as often as a model trained without the image "
            "guesses them",
        ),
    },
}


def table(runs: list[PublicRun], own_parts: bool = False) -> str:
    """The lines `check --train` prints: per part, its score on the public test scenes next to the threshold and the
    verdict; under it why the verdict failed, how many epochs the run trained (and where it stopped), the two image
    controls each beside what a model that reads the image reaches (CONTROLS_EXPECTED), and Part 1's trained
    recall@1 next to its threshold. `own_parts`: the runs used the student's own modules of OTHER_PARTS (the
    handout), which a failed run's last line names."""
    lines = []
    for run in runs:
        published = PUBLISHED[run.part]
        verdict = "reaches the threshold" if run.passed else "FAILS"
        if not run.started:
            lines.append(f"{run.part}: {verdict}: {_indented(run.failure or 'the run did not start')}")
            continue
        if run.score is None:
            why = run.failure or "nothing to score in the run's reply"
            lines.append(f"{run.part}: {verdict}: {_indented(why)}")
        else:
            lines.append(f"{run.part}: {published.metric} {run.score:.3f} (threshold {published.threshold}): {verdict}")
            if run.failure:
                lines.append(f"    {_indented(run.failure)}")
            if run.also:
                lines.append(f"    {run.also}")
        if run.epochs is not None:
            lines.append(f"    {run.epochs}")
        if run.score is not None:
            lines.extend(control_lines(run))
        if published.retrieval:
            bar = published.retrieval
            if run.recall is None:
                why = run.recall_failure or "nothing to score: the run ended without a reply"
                lines.append(f"    {bar.metric}: - (threshold {bar.threshold}): {_indented(why)}")
            else:
                passed = "reaches the threshold" if run.recall >= bar.threshold else "FAILS"
                lines.append(f"    {bar.metric} {run.recall:.3f} (threshold {bar.threshold}): {passed}")
        others = OTHER_PARTS[run.part]
        if own_parts and not run.passed and others:
            names = " and ".join(", ".join(f"{p}.py" for p in others).rsplit(", ", 1))
            lines.append(
                f"    this run used your own {names}, where the grader uses the reference versions: a bug "
                f"there can be the cause"
            )
    return "\n".join(lines)


CONTROL_NAMES = {"zeroed": "zeroed images", "shuffled": "shuffled images (each scene given another's)"}


def control_lines(run: PublicRun) -> list[str]:
    """The image controls of a run: the same trained model captioning the same test scenes without their images
    and with another scene's, each score beside what a model that reads the image reaches there. They inform; the
    verdict never reads them."""
    metric = PUBLISHED[run.part].metric
    lines = ["    image controls (the same model, the same test scenes; they do not count in the verdict):"]
    for name in CONTROLS:
        expected = CONTROLS_EXPECTED[run.part][name]
        got = run.controls.get(name)
        got = f"{got:.3f}" if got is not None else "-"
        lines.append(
            f"        {CONTROL_NAMES[name]}: {metric} {got} (expected {expected.words} for a model that "
            f"reads the image: {expected.why})"
        )
    return lines


def _indented(text: str) -> str:
    """A failure's text under its part's line: its first 12 lines, the later ones indented."""
    return "\n".join(text.splitlines()[:12]).replace("\n", "\n    ")
