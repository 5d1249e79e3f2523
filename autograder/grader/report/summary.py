"""The batch summary for TAs (`python -m autograder batch` writes DIR/summary.html): the score distribution of
every part, the checks failed most often, and every submission with its totals (linked to its feedback report
when `--reports` wrote one, and to its staff view, staff/<id>.txt: each failed check's case and traceback), and a
link to the similarity report where `similarity` wrote one (autograder/grader/similarity.py). Built
from the results.json files, so a resumed batch summarises every submission.
Staff-only: it names every student."""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path
from urllib.parse import quote

from autograder.grader import rubric as rubric_mod
from autograder.grader.report import figures
from autograder.grader.report.html import meter, page, points
from autograder.grader.results import missing_parts, was_graded
from autograder.grader.staff import STAFF_FOLDER, batch_staff_path
from shared.parts import PARTS

TOP_FAILED = 15
SIMILARITY_REPORT = "similarity.html"  # autograder/grader/similarity.py writes it beside this page


def failed_checks(documents: list[dict]) -> list[dict]:
    """Per check (results.json test), how many of the submissions that hold its part failed it, most failed first;
    a part whose module was not submitted counts in missing_modules, not here."""
    counts: dict[tuple[str, str], dict] = {}
    for document in documents:
        absent = set(missing_parts(document))
        for test in document.get("tests", []):
            if absent & set(test.get("tags", [])):
                continue
            key = (str(test.get("number", "")), str(test.get("name", "")))
            entry = counts.setdefault(key, {"number": key[0], "name": key[1], "failed": 0, "graded": 0})
            entry["graded"] += 1
            entry["failed"] += test.get("score", 0) < test.get("max_score", 0)
    ranked = [e for e in counts.values() if e["failed"]]
    return sorted(ranked, key=lambda e: (-e["failed"], [int(x) if x.isdigit() else 0 for x in e["number"].split(".")]))


def missing_modules(documents: list[dict]) -> dict[str, int]:
    """Per part, how many of the graded submissions did not submit its module (parts nobody missed left out)."""
    counts = {p.module: sum(p.module in missing_parts(d) for d in documents) for p in PARTS}
    return {part: n for part, n in counts.items() if n}


def render_summary(rows: list[dict], out: Path, generated: str | None = None) -> str:
    """The summary page of a batch output folder `out` holding <id>/results.json (and <id>/report.html)."""
    out = Path(out)
    maxima = {part: sum(e.points for e in entries.values()) for part, entries in rubric_mod.load().items()}
    maxima["total"] = sum(maxima.values())
    graded = [r for r in rows if was_graded(r)]
    documents = []
    for r in graded:
        try:
            documents.append(json.loads((out / r["id"] / "results.json").read_text()))
        except (OSError, ValueError):
            continue
    columns = {p.module: [float(r.get(p.module, 0.0)) for r in graded] for p in PARTS}
    columns["total"] = [float(r.get("total", 0.0)) for r in graded]
    histogram = (
        '<p class="note">No graded submission yet.</p>'
        if not graded
        else f'<img class="plot" src="{figures.data_uri(figures.histograms(columns, maxima))}" '
        'alt="score distribution per part">'
    )

    failed = failed_checks(documents)[:TOP_FAILED]
    failed_rows = "".join(
        f'<tr data-check-number="{escape(e["number"])}"><td class="num">{escape(e["number"])}</td>'
        f'<td>{escape(e["name"])}</td><td class="num">{e["failed"]}</td>'
        f'<td class="num">{100 * e["failed"] / max(e["graded"], 1):.0f}%</td></tr>'
        for e in failed
    )
    failed_table = (
        '<p class="note">No check failed.</p>'
        if not failed
        else '<table class="failed"><thead><tr><th class="num">#</th><th>check</th><th class="num">failed</th>'
        f'<th class="num">of graded</th></tr></thead><tbody>{failed_rows}</tbody></table>'
    )

    missing = missing_modules(documents)
    missing_table = (
        '<p class="note">Every graded submission holds every module.</p>'
        if not missing
        else '<table class="missing"><thead><tr><th>module</th><th class="num">not submitted</th></tr></thead>'
        "<tbody>"
        + "".join(
            f'<tr data-module="{escape(m)}"><td>{escape(m)}.py</td><td class="num">{n}</td></tr>'
            for m, n in missing.items()
        )
        + "</tbody></table>"
    )

    head = "".join(f'<th class="num" title="{escape(p.title)}">{p.number}</th>' for p in PARTS)
    body_rows = []
    for r in sorted(rows, key=lambda r: str(r.get("id", ""))):
        ident = str(r.get("id", ""))
        report = out / ident / "report.html"
        label = escape(ident)
        if report.is_file():
            label = f'<a href="{escape(quote(ident, safe=""))}/report.html">{label}</a>'
        staff = batch_staff_path(out, ident)
        staff_link = (
            f'<a class="staff" href="{STAFF_FOLDER}/{escape(quote(ident + ".txt", safe=""))}">staff view</a>'
            if staff.is_file()
            else ""
        )
        cells = "".join(
            f'<td class="num">{points(float(r[p.module]))}</td>' if p.module in r else "<td></td>" for p in PARTS
        )
        total = r.get("total")
        status = str(r.get("status", ""))
        body_rows.append(
            f'<tr class="submission" data-id="{escape(ident)}"><td>{label}</td>'
            f"<td>{escape(str(r.get('name', '')))}</td>{cells}"
            f'<td class="num">{"" if total is None else points(float(total))}</td>'
            f"<td>{'' if status == 'graded' else escape(status)}</td><td>{staff_link}</td></tr>"
        )
    submissions = (
        '<table class="submissions"><thead><tr><th>id</th><th>name</th>'
        + head
        + '<th class="num">total</th><th>status</th><th title="each failed check\'s case and traceback">'
        "staff view</th></tr></thead><tbody>" + "".join(body_rows) + "</tbody></table>"
    )

    mean = sum(columns["total"]) / len(graded) if graded else 0.0
    similar = out / SIMILARITY_REPORT
    similarity_link = (
        f'<p class="similarity"><a href="{SIMILARITY_REPORT}">Similarity report</a>: which submissions '
        "share code, per part (staff only).</p>"
        if similar.is_file()
        else ""
    )
    generated = generated or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    part_means = "".join(
        f"<tr><td>Part {p.number}</td><td>{escape(p.title)}</td>"
        f"<td>{meter(sum(columns[p.module]) / len(graded) if graded else 0.0, maxima.get(p.module, 0.0))}</td>"
        f'<td class="num">{(sum(columns[p.module]) / len(graded) if graded else 0.0):.1f} / '
        f"{points(maxima.get(p.module, 0.0))}</td></tr>"
        for p in PARTS
    )
    body = (
        f'<header><h1>Batch summary</h1><p class="meta">{len(rows)} submissions, {len(graded)} graded '
        f"&middot; {escape(generated)}</p>"
        f'<p class="total" data-graded="{len(graded)}">Mean total: {mean:.1f} / {points(maxima["total"])}</p>'
        f'<p class="notice">For course staff: this page names every student.</p>{similarity_link}</header><main>'
        f'<section class="part" id="distribution"><h2>Score distribution per part</h2>'
        f'<table class="parts"><thead><tr><th>part</th><th>topic</th><th>mean</th><th class="num">points</th></tr>'
        f'</thead><tbody>{part_means}</tbody></table><figure class="figure wide" data-figure="histograms">'
        f"{histogram}</figure></section>"
        f'<section class="part" id="failed"><h2>Checks failed most often</h2>{failed_table}</section>'
        f'<section class="part" id="missing"><h2>Modules not submitted</h2>{missing_table}</section>'
        f'<section class="part" id="submissions"><h2>Submissions</h2>{submissions}</section></main>'
    )
    return page("Batch summary", body)


SUMMARY = "summary.html"  # in the batch's output folder


def write_summary(rows: list[dict], out: Path) -> Path:
    """Write out/summary.html; return its path."""
    path = Path(out) / SUMMARY
    path.write_text(render_summary(rows, out), encoding="utf-8")
    return path
