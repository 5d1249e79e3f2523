"""The reference's training curves, drawn beside the student's own in feedback reports.

    python -m autograder reference-curves      # rewrites autograder/grader/report/reference_curves.json

Measured once and committed, not measured in each grading run: the budget's timed reference run
(`GradingContext.budget`) trains one epoch only, which is one point of a curve, and training the reference
in full in every run would double the cost of each training check. The curves are measured on the public
data (seed 0, the scenes students train on at home) with the training checks' own recipe (each part's spec in
autograder/grader/training/: its reference run, epochs, batch size and learning rate; training seed 0, one
thread): a curve
depends on the data only through its distribution, which the public and the hidden scenes share, and the
public data holds nothing hidden. Regenerate after changing a part's training recipe; tests/grader/test_report.py
fails when the file and the specs' epochs disagree.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

CURVES_FILE = Path(__file__).resolve().parent / "reference_curves.json"
PUBLIC_SEED = 0  # shared.encoder.load_data's default: the public training scenes (test scenes: seed 1)


def measure(parts: tuple[str, ...] | None = None, seed: int = PUBLIC_SEED) -> dict:
    """Train each part's reference on the public data with its check's recipe; return the curves document."""
    import torch

    from autograder.grader.context import GradingContext
    from autograder.grader.training import SPECS

    torch.set_num_threads(1)
    ctx = GradingContext(Path(tempfile.mkdtemp(prefix="captionkit-curves-")), seed=seed)
    document = {
        "about": "per-epoch mean training loss of the reference, public data (seed 0), "
        "written by python -m autograder reference-curves",
        "torch": torch.__version__.split("+")[0],
        "parts": {},
    }
    for part in parts or tuple(SPECS):
        spec = SPECS[part]
        history = spec.reference_model(ctx, seed).history
        # the same names the check keeps the student's curves under (TrainingSpec.curves)
        curves = {name: [round(float(v), 4) for v in getattr(history, key)] for name, key in spec.curves.items()}
        document["parts"][part] = {"epochs": spec.epochs, "curves": curves}
        print(
            f"{part}: " + "; ".join(f"{name} {values[0]:.3f} -> {values[-1]:.3f}" for name, values in curves.items()),
            flush=True,
        )
    return document


def dumps(document: dict) -> str:
    """JSON with one line per curve."""
    text = json.dumps(document, indent=1)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


def write(path: Path = CURVES_FILE) -> Path:
    path.write_text(dumps(measure()))
    return path


def load(path: Path = CURVES_FILE) -> dict[str, dict[str, list[float]]]:
    """part -> {curve name: per-epoch losses}; empty when the file is missing or unreadable (the report then
    draws the student's curve alone)."""
    try:
        parts = json.loads(Path(path).read_text())["parts"]
        return {
            part: {str(name): [float(x) for x in values] for name, values in entry["curves"].items()}
            for part, entry in parts.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
