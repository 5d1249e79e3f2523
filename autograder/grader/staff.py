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
while any test is hidden. Nothing a student receives holds this module (tests/grader/test_staff.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from autograder.public.grade_report import CheckResult, GradeReport

STAFF_FILE = "staff.txt"
STAFF_FOLDER = "staff"  # batch: DIR/staff/<id>.txt; a submission with this id is not graded (batch.held_back)
WARNING = "For the course staff only: it shows hidden checks' inputs. Never give this file to a student."
SEPARATOR = "\n\n"


def failure_block(r: CheckResult) -> str:
    """One failed check: its number, part, name and points, what the student was shown, and the staff note."""
    shown = "\n".join("    " + line for line in (r.output or "(nothing)").splitlines())
    note = "\n".join("    " + line for line in (r.staff_note or "(no more than the student saw)").splitlines())
    return (
        f"{r.number} {r.part}.{r.name} ({r.visibility}, {r.score:g} of {r.max_score:g}): {r.description}\n"
        f"  the student saw:\n{shown}\n  for the staff:\n{note}"
    )


FLAG = "FLAGGED "  # a header line of banned_op_flags
BANNED_OP_NOTE = (
    "ForbiddenOpError: your module's source uses "  # the grader's source scan (client.calls.CallLoop._refuse_banned)
)


def banned_op_flags(report: GradeReport) -> list[str]:
    """One line per part whose module the grader's source scan found using, or possibly reaching, an op a check
    bans (autograder.public.source_scan): what it found, and how many checks earned nothing for it. The scan runs
    in the grading process, so the module cannot switch it off."""
    found: dict[str, tuple[str, int]] = {}
    for r in report.results:
        if not r.passed and r.staff_note.startswith(BANNED_OP_NOTE):
            reason = r.staff_note[len(BANNED_OP_NOTE) :].split("; this check compares", 1)[0]
            first, count = found.get(r.part, (reason, 0))
            found[r.part] = (first, count + 1)
    return [
        f"{FLAG}{part}: the module's source uses {reason} ({count} check{'s' * (count != 1)} earned nothing for it)"
        for part, (reason, count) in found.items()
    ]


def staff_text(report: GradeReport, submission: str = "") -> str:
    """The staff view of `report`, as plain text: a header (with a line for each banned-op flag), then one block
    per failed check in rubric order."""
    failed = [r for r in report.results if not r.passed]
    header = "\n".join(
        [
            f"Staff view of {submission or 'a submission'}: {report.score:g} / {report.max_score:g}, "
            f"{len(failed)} failed check{'s' * (len(failed) != 1)}",
            *banned_op_flags(report),
            WARNING,
        ]
    )
    return SEPARATOR.join([header, *(failure_block(r) for r in failed)]) + "\n"


def merged_text(old: str, new: str, parts: tuple[str, ...]) -> str:
    """A staff view: `old` with the blocks of `parts` replaced by those of `new` (a regrade of those parts only),
    in rubric order, under `new`'s header with the merge named. The written answers of `old` are dropped (`batch`
    adds them again after grading: add_written_answers)."""

    def blocks(text: str) -> list[str]:
        return [b for b in with_written_answers(text, "").strip("\n").split(SEPARATOR)[1:] if b]

    def key(block: str) -> list[int]:
        return [int(x) for x in block.split(" ", 1)[0].split(".")]

    def part(block: str) -> str:
        return block.split(" ", 2)[1].split(".", 1)[0]

    def flags(text: str) -> list[str]:  # banned_op_flags' lines of the header: "FLAGGED <part>: ..."
        return [line for line in text.split(SEPARATOR, 1)[0].splitlines() if line.startswith(FLAG)]

    kept = [b for b in blocks(old) if part(b) not in parts] + [b for b in blocks(new) if part(b) in parts]
    flagged = [f for f in flags(old) if f[len(FLAG) :].split(":", 1)[0] not in parts] + [
        f for f in flags(new) if f[len(FLAG) :].split(":", 1)[0] in parts
    ]
    header = "\n".join(
        [f"Staff view, parts {', '.join(parts)} regraded and merged into the earlier grade", *flagged, WARNING]
    )
    return SEPARATOR.join([header, *sorted(kept, key=key)]) + "\n"


def batch_staff_path(out: Path, ident: str) -> Path:
    """Where `batch` writes the staff view of submission `ident`: DIR/staff/<id>.txt, outside the submission's
    own folder DIR/<id>/ (results.json, report.html), so that handing out that folder hands out no staff view."""
    return Path(out) / STAFF_FOLDER / f"{ident}.txt"


def write_staff(text: str, path: Path) -> Path:
    """Write `text` to `path`, readable by its owner alone from the moment it exists (and a folder made for it, by
    its owner alone too), whole or not at all (a new file renamed over the old); return the path. What no codec can
    write (a lone surrogate from a notebook's JSON) is written as "?"."""
    import tempfile

    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return path


# -- written questions, graded by hand ---------------------------------------------------------------------------


def written_answers_text(folder: Path) -> str:
    """The staff view of the written questions answered in the notebooks of submission folder `folder` (the part
    notebooks, or the nbgrader course's written.ipynb): per question, its prompt, the student's answer and, beside
    it, the rubric to grade it by (instructor/rubrics/). Empty when the folder holds no notebook with a question,
    or where the kit's instructor tree is not installed."""
    import json

    try:
        from instructor.questions import all_questions, answers_in
    except ImportError:  # a grader installed without the instructor tree (Gradescope's image): nothing to show
        return ""
    answers: dict[str, str] = {}
    for path in sorted(Path(folder).glob("*.ipynb")):
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            continue  # a link, a device or a notebook too large to be an answer sheet: not read
        try:
            found = answers_in(json.loads(path.read_text(encoding="utf-8")))
        except Exception:  # noqa: BLE001 (JSON that decodes to anything, nested past the decoder's recursion limit)
            continue  # an unreadable notebook: its answers are missing, as if not submitted
        answers |= {key: text for key, text in found.items() if text is None or isinstance(text, str)}
    blocks = []
    for q in all_questions():
        if q.key not in answers:
            continue
        answer = "\n".join("    " + line for line in (answers[q.key] or "(no answer)").splitlines())
        rubric = "\n".join(f"    [{c.points:g}] {c.criterion}" for c in q.rubric)
        prompt = " ".join(q.prompt.split())
        blocks.append(
            f"Written question {q.number} {q.key} ({q.points:g} point{'s' * (q.points != 1)}): {prompt}\n"
            f"  the student's answer:\n{answer}\n  rubric (grade by hand):\n{rubric}"
        )
    if not blocks:
        return ""
    total = sum(q.points for q in all_questions() if q.key in answers)
    header = f"{WRITTEN_HEADER}{len(blocks)} found in the notebooks, {total:g} points to grade by hand"
    return SEPARATOR.join([header, *blocks]) + "\n"


WRITTEN_HEADER = "Written questions: "
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # a submitted notebook read for its answers (outputs make them large)


def with_written_answers(text: str, written: str) -> str:
    """A staff view `text` with its written-questions section (written_answers_text) replaced by `written`."""
    kept = text.split(SEPARATOR + WRITTEN_HEADER, 1)[0].rstrip("\n") + "\n"
    return kept + (SEPARATOR.rstrip("\n") + "\n" + written if written else "")


def add_written_answers(submissions_root: Path, out: Path) -> int:
    """After `batch`: each staff view DIR/staff/<id>.txt with the written answers of its submission's notebooks
    beside their rubrics (the grading jobs carry the modules only); return how many views hold answers."""
    import tempfile

    from autograder.grader.intake import IntakeError, discover, unpack

    count = 0
    with tempfile.TemporaryDirectory(prefix="captionkit-written-") as tmp:
        for s in discover(submissions_root):
            path = batch_staff_path(out, s.id)
            if not path.is_file():
                continue
            try:
                written = written_answers_text(unpack(s, Path(tmp)))
            except (IntakeError, OSError):
                continue
            write_staff(with_written_answers(path.read_text(encoding="utf-8", errors="replace"), written), path)
            count += bool(written)
    return count
