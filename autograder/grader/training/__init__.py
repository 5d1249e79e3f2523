"""The training checks: one declarative spec per trained part (TrainingSpec), all in one registry (SPECS), and the
plumbing they share.

A training check trains the student's model on the hidden scenes with the part's recipe, in the worker, under a
time budget measured on the reference in the same grading run, and judges the captions it returns against the
hidden test references, which never leave the grading process. Everything about one part's training check is
its spec, read by every tool that needs it:

    the check itself              registered with the part's other checks (training_check); its budget is timed
                                  only for a run that needs it (run_within_budget)
    python -m autograder.grader.calibrate   the reference's score over training seeds (the threshold's spread)
    python -m autograder reference-curves   the reference's training curves the feedback reports draw
    python -m instructor reproduce          the lecture's budgets

What a student may know of the check (the recipe's epochs, batch size, learning rate and other inputs, the metric,
the threshold, the verdict) is published in the public zone, autograder/public/published_training.py (PUBLISHED), which
`check --train` (autograder/public/training.py) trains on the public data with it; each spec reads it from there.

    spec.py          TrainingSpec, SPECS, training_check, run_within_budget, the reply checks (ReplyCheck)
    keeping.py       what a check keeps of the student's run for the feedback report
    <part>.py        one part's spec: its reference run, the reply its recipe gives for it, its reply checks

Adding a trained part: write its recipe (autograder/worker/recipes/<part>.py, `train_and_decode`), publish its
budget and threshold (autograder/public/published_training.py, PUBLISHED), add its module here (one `training_check(
TrainingSpec(...))`, imported below) and one entry to the rubric (docs/grader.md shows an example).
"""

from autograder.grader.training import attention, lstm_a, reinforce, show_and_tell, stylenet  # noqa: F401 (register)
from autograder.grader.training.keeping import SHOWN, keep_attention, keep_beams, keep_run
from autograder.grader.training.show_and_tell import hidden_retrieval_set, retrieval_file, trained_recall_at_1
from autograder.grader.training.spec import (
    SPECS,
    ReplyCheck,
    StoppedRun,
    TrainedRun,
    TrainingSpec,
    register_reply_check,
    run_within_budget,
    share_split,
    stops_at_threshold,
    training_check,
)

__all__ = [
    "SHOWN",
    "SPECS",
    "ReplyCheck",
    "StoppedRun",
    "TrainedRun",
    "TrainingSpec",
    "hidden_retrieval_set",
    "keep_attention",
    "keep_beams",
    "keep_run",
    "register_reply_check",
    "retrieval_file",
    "run_within_budget",
    "share_split",
    "stops_at_threshold",
    "trained_recall_at_1",
    "training_check",
]
