"""The staff view of a grade: for every failed check, hidden ones included, what a student was shown and what the
course staff need to answer "why did I lose this point?": the failing case and the traceback in the student's own
file (CheckResult.staff_note).

    python -m autograder grade SUBMISSION --staff [PATH]     (default: staff.txt beside --json, else here)
    python -m autograder batch ...                           (always: DIR/staff/<id>.txt, linked from summary.html)
    on Gradescope                                            (run_autograder's stdout, which only instructors see)

It names hidden inputs, so it goes only where students never look: a file readable by its owner alone (in
`batch`, in a folder of its own, never in the DIR/<id>/ folder whose report.html a TA hands out), and on
Gradescope the captured stdout (results.json says "stdout_visibility": "hidden"), never a test's output, which
students see after the due date. A hidden test entry would do too, but Gradescope hides the total from students
while any test is hidden. Nothing a student receives holds this module (tests/test_staff.py).
"""
from __future__ import annotations

import os
from pathlib import Path

from autograder.public.runner import CheckResult, GradeReport

STAFF_FILE = "staff.txt"
STAFF_FOLDER = "staff"   # batch: DIR/staff/<id>.txt; no submission may have this id (batch.run refuses one)
WARNING = "For the course staff only: it shows hidden checks' inputs. Never give this file to a student."
SEPARATOR = "\n\n"


def failure_block(r: CheckResult) -> str:
    """One failed check: its number, part, name and points, what the student was shown, and the staff note."""
    shown = "\n".join("    " + line for line in (r.output or "(nothing)").splitlines())
    note = "\n".join("    " + line for line in (r.staff_note or "(no more than the student saw)").splitlines())
    return (f"{r.number} {r.part}.{r.name} ({r.visibility}, {r.score:g} of {r.max_score:g}): {r.description}\n"
            f"  the student saw:\n{shown}\n  for the staff:\n{note}")


def staff_text(report: GradeReport, submission: str = "") -> str:
    """The staff view of `report`, as plain text: a header, then one block per failed check in rubric order."""
    failed = [r for r in report.results if not r.passed]
    header = (f"Staff view of {submission or 'a submission'}: {report.score:g} / {report.max_score:g}, "
              f"{len(failed)} failed check{'s' * (len(failed) != 1)}\n{WARNING}")
    return SEPARATOR.join([header, *(failure_block(r) for r in failed)]) + "\n"


def merged_text(old: str, new: str, parts: tuple[str, ...]) -> str:
    """A staff view: `old` with the blocks of `parts` replaced by those of `new` (a regrade of those parts only),
    in rubric order, under `new`'s header with the merge named."""
    def blocks(text: str) -> list[str]:
        return [b for b in text.strip("\n").split(SEPARATOR)[1:] if b]

    def key(block: str) -> list[int]:
        return [int(x) for x in block.split(" ", 1)[0].split(".")]

    def part(block: str) -> str:
        return block.split(" ", 2)[1].split(".", 1)[0]

    kept = [b for b in blocks(old) if part(b) not in parts] + [b for b in blocks(new) if part(b) in parts]
    header = f"Staff view, parts {', '.join(parts)} regraded and merged into the earlier grade\n{WARNING}"
    return SEPARATOR.join([header, *sorted(kept, key=key)]) + "\n"


def batch_staff_path(out: Path, ident: str) -> Path:
    """Where `batch` writes the staff view of submission `ident`: DIR/staff/<id>.txt, outside the submission's
    own folder DIR/<id>/ (results.json, report.html), so that handing out that folder hands out no staff view."""
    return Path(out) / STAFF_FOLDER / f"{ident}.txt"


def write_staff(text: str, path: Path) -> Path:
    """Write `text` to `path`, readable by its owner alone from the moment it exists (and a folder made for it, by
    its owner alone too); return the path."""
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return path
