"""Scores out: Gradescope's results.json (written atomically) and the per-part table."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from autograder.engine import GradeReport
from shared.parts import BY_MODULE, PARTS

# Public checks are visible at once; hidden ones after the due date, so students see their total then.
GRADESCOPE_VISIBILITY = {"public": "visible", "hidden": "after_due_date"}


def gradescope_results(report: GradeReport) -> dict:
    """The results.json document: one test per check, tagged with its part's module name."""
    tests = [{
        "name": f"Part {BY_MODULE[r.part].number} ({r.part}): {r.description}",
        "number": r.number,
        "score": r.score,
        "max_score": r.max_score,
        "status": "passed" if r.passed else "failed",
        "visibility": GRADESCOPE_VISIBILITY[r.visibility],
        "output": r.output,
        "tags": [r.part, r.visibility],
    } for r in report.results]
    lines = [f"Part {p.number} {p.module}: {got:g} / {out_of:g}" for p in PARTS
             for part, (got, out_of) in report.part_totals().items() if part == p.module]
    return {"score": report.score, "execution_time": round(report.seconds, 2),
            "output": "\n".join(report.notes + lines), "tests": tests}


def write_json_atomic(document: dict, path: Path) -> None:
    """Write to a temporary file beside `path`, then rename over it: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(document, f, indent=2)
    os.replace(tmp, path)


def table(report: GradeReport, show_checks: bool = True) -> str:
    """A plain-text table: one line per check (optional) and the total of each part."""
    lines = []
    totals = report.part_totals()
    for p in PARTS:
        if p.module not in totals:
            continue
        got, out_of = totals[p.module]
        lines.append(f"Part {p.number} {p.module:14s} {got:6.1f} / {out_of:5.1f}")
        if show_checks:
            for r in (r for r in report.results if r.part == p.module):
                mark = "PASS" if r.passed else "FAIL"
                lines.append(f"    {r.number:5s} {mark}  {r.score:4.1f}/{r.max_score:<4.1f} {r.name}"
                             + ("" if r.passed else f"\n{_indent(r.output, 18)}"))
    lines.append(f"{'total':21s} {report.score:6.1f} / {report.max_score:5.1f}   ({report.seconds:.1f} s)")
    return "\n".join(lines)


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.splitlines()[:12])
