"""The bundled sample submission: partly correct, so that grading it shows passes and failures.

It is built from the reference solutions and the student stubs, so it never drifts from them:
  show_and_tell, attention   the reference (full marks)
  decoding                   beam search that forgets to freeze finished beams
  bleu                       no clipping of n-gram counts
  reinforce                  the untouched stub (every TODO raises NotImplementedError)
  lstm_a                     A2 and A3 swapped
  stylenet                   missing from the submission
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def replace_once(text: str, old: str, new: str, what: str) -> str:
    """Replace the one occurrence of `old` in `text`; fail loudly if it occurs zero or several times."""
    count = text.count(old)
    if count != 1:
        raise ValueError(f"{what}: the snippet to replace occurs {count} times, expected exactly once")
    return text.replace(old, new)


EDITS = {
    "decoding": ("        log_probs = torch.where(done.unsqueeze(-1), frozen, log_probs)\n", ""),
    "bleu": (
        "matches = sum(min(count, max_in_a_ref[gram]) for gram, count in candidate.items())",
        "matches = sum(count for gram, count in candidate.items() if max_in_a_ref[gram] > 0)",
    ),
    "lstm_a": (
        '        return [image_input, attr_input], None\n    if variant == "A3":',
        '        return [attr_input, image_input], None\n    if variant == "A3":',
    ),
}
FROM_REFERENCE = ("show_and_tell", "attention")
FROM_STUB = ("reinforce",)


def build(folder: Path) -> Path:
    """Write the sample submission into `folder` and return it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for part in FROM_REFERENCE:
        shutil.copy(ROOT / "solutions" / f"{part}.py", folder / f"{part}.py")
    for part in FROM_STUB:
        shutil.copy(ROOT / "assignments" / f"{part}.py", folder / f"{part}.py")
    for part, (old, new) in EDITS.items():
        text = (ROOT / "solutions" / f"{part}.py").read_text()
        (folder / f"{part}.py").write_text(replace_once(text, old, new, f"sample {part}"))
    return folder
