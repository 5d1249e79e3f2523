"""Scores out: Gradescope's results.json (written atomically); the per-part table is
autograder.public.score_table.table."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from autograder.public.grade_report import GradeReport
from shared.parts import BY_MODULE, PARTS

# Public checks are visible at once; hidden ones after the due date, so students see their total then.
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_due_date"}
# run_autograder's stdout carries the staff view (autograder/grader/staff.py): instructors only, said explicitly.
STDOUT_VISIBILITY = "hidden"


def gradescope_results(report: GradeReport) -> dict:
    """The results.json document: one test per check, tagged with its part's module name."""
    tests = [
        {
            "name": f"Part {BY_MODULE[r.part].number} ({r.part}): {r.description}",
            "number": r.number,
            "score": r.score,
            "max_score": r.max_score,
            "status": "passed" if r.passed else "failed",
            "visibility": GRADESCOPE_VISIBILITY[r.visibility],
            "output": r.output,
            "tags": [r.part, r.visibility],
        }
        for r in report.results
    ]
    return {
        "score": report.score,
        "execution_time": round(report.seconds, 2),
        "output": "\n".join(report.notes + part_lines(tests)),
        "tests": tests,
        "stdout_visibility": STDOUT_VISIBILITY,
    }


def part_lines(tests: list[dict]) -> list[str]:
    """One line per graded part, in part order, of what the student may see before the due date: the points of its
    visible tests, and how many more the others carry, never how many of those were earned ("Part 3 bleu: 5 / 5
    public points; 10 more from hidden and training checks, shown after the due date"). The top-level output is
    visible at once, so a total there would give away the hidden checks' outcomes (and with them anything the
    worker that served them could signal) that their visibility keeps back."""
    lines = []
    for p in PARTS:
        mine = [t for t in tests if p.module in t["tags"]]
        if not mine:
            continue
        shown = [t for t in mine if t["visibility"] == "visible"]
        later = sum(t["max_score"] for t in mine) - sum(t["max_score"] for t in shown)
        line = (
            f"Part {p.number} {p.module}: {sum(t['score'] for t in shown):g} / "
            f"{sum(t['max_score'] for t in shown):g} public points"
        )
        lines.append(
            line + (f"; {later:g} more from hidden and training checks, shown after the due date" if later else "")
        )
    return lines


PART_LINE = re.compile(r"^Part [1-7] \w+: ")


def merge_results(old: dict, new: dict, parts: tuple[str, ...]) -> dict:
    """A results.json document: `old` with the tests of `parts` replaced by those of `new` (a grade of those parts
    only), in rubric order; the score and the part lines recomputed, the notes of the newer run, the seconds of
    both runs added. A full grade and a merge of the same outcomes give the same document, seconds aside."""
    kept = [t for t in old.get("tests", []) if not set(t["tags"]) & set(parts)]
    tests = sorted(
        kept + [t for t in new["tests"] if set(t["tags"]) & set(parts)],
        key=lambda t: [int(x) for x in t["number"].split(".")],
    )
    notes = [line for line in new.get("output", "").splitlines() if not PART_LINE.match(line)]
    return {
        "score": sum(t["score"] for t in tests),
        "execution_time": round(old.get("execution_time", 0) + new.get("execution_time", 0), 2),
        "output": "\n".join(notes + part_lines(tests)),
        "tests": tests,
        "stdout_visibility": STDOUT_VISIBILITY,
    }


def write_json_atomic(document: dict, path: Path) -> None:
    """Write to a temporary file beside `path`, then rename over it: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
    os.replace(tmp, path)


MISSING_MODULE = re.compile(r"^(?P<module>\w+)\.py is missing from the submission$")  # autograder.public.staging


def missing_parts(document: dict) -> list[str]:
    """The parts of a results.json document whose module was not submitted (every test of the part says so), in
    part order; parts the document does not grade are not listed."""
    missing = []
    for p in PARTS:
        outputs = [str(t.get("output", "")) for t in document.get("tests", []) if p.module in t.get("tags", [])]
        if outputs and all(MISSING_MODULE.match(o) for o in outputs):
            missing.append(p.module)
    return missing


def graded_parts(document: dict) -> list[str]:
    """The parts a results.json document has tests of, in part order."""
    tagged = {tag for t in document.get("tests", []) for tag in t.get("tags", [])}
    return [p.module for p in PARTS if p.module in tagged]


def status(document: dict, missing: list[str], graded: list[str]) -> str:
    """A row's status: "graded", "missing: decoding, bleu" (some modules not submitted), "empty submission" (none),
    or why the submission could not be graded."""
    if not document.get("tests"):
        return document.get("output", "not graded")
    if missing and len(missing) == len(graded):
        return EMPTY
    return f"missing: {', '.join(missing)}" if missing else GRADED


GRADED, EMPTY = "graded", "empty submission"


def was_graded(row: dict) -> bool:
    """The row's submission was read and graded (all of it, or the modules it has, or none when it was empty)."""
    return row.get("status") in (GRADED, EMPTY) or str(row.get("status", "")).startswith("missing: ")
