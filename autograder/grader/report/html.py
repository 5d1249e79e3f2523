"""The feedback report of one graded submission: one self-contained HTML file.

It shows, per part, every check with its points and the output a student may see (`CheckResult.output`,
never the staff note; one row per unwritten TODO and one for a missing module, as `check` prints them), and
figures of the student's own trained models from what the training checks kept (`ctx.keep`,
GradeReport.artifacts): the training curve beside the reference's, captions of the first few hidden test scenes,
attention maps, beams with their scores, the style swap. docs/grader.md ("Feedback
reports") says what is shown and when it may be given to students.

Self-contained: inline CSS, PNGs as data URIs, no external resource (a Content-Security-Policy forbids any),
no web fonts. One inline script (allowed by its hash) records load errors and broken images into attributes
of <html> (data-rendered="ok"), which tests read from a headless browser.
"""

from __future__ import annotations

import base64
import hashlib
import math
import time
from html import escape
from pathlib import Path

from autograder.grader.report import figures
from autograder.grader.report import reference as reference_curves
from autograder.public.score_table import Group, check_groups
from shared.parts import PARTS

STYLE = """
:root { --ok: #1e8449; --bad: #b03a2e; --ink: #1c2833; --muted: #5d6d7e; --line: #d5d8dc; --soft: #f4f6f7; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1100px; padding: 24px 28px 48px; line-height: 1.45; font-size: 15px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 0; } h3 { font-size: 15px; margin: 18px 0 6px; }
.meta, .muted, figcaption, .note { color: var(--muted); font-size: 13px; }
.total { font-size: 20px; font-weight: 600; margin: 10px 0 14px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
td.num, th.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
meter { width: 140px; height: 12px; }
section.part { border: 1px solid var(--line); border-radius: 8px; padding: 16px 18px; margin: 22px 0; }
section.part > header { display: flex; justify-content: space-between; align-items: baseline; gap: 12px;
                        margin-bottom: 10px; }
.score { font-weight: 600; white-space: nowrap; }
.badge { display: inline-block; min-width: 44px; text-align: center; font-size: 12px; font-weight: 700;
         border-radius: 4px; padding: 1px 6px; color: #fff; }
.pass .badge { background: var(--ok); } .fail .badge { background: var(--bad); }
tr.fail td { background: #fdf2f1; }
td.desc code { color: var(--muted); font-size: 12px; }
pre.output { white-space: pre-wrap; word-break: break-word; background: var(--soft); border-left: 3px solid var(--bad);
             margin: 4px 0 2px; padding: 6px 9px; font-size: 12.5px; max-height: 260px; overflow: auto; }
.figures { display: flex; flex-wrap: wrap; gap: 18px; margin-top: 12px; }
figure { margin: 0; } figure.wide { flex-basis: 100%; }
figure img.plot { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
img.scene { width: 72px; height: 72px; image-rendering: pixelated; border: 1px solid var(--line); border-radius: 3px; }
table.samples td { vertical-align: middle; white-space: nowrap; } table.samples { width: auto; min-width: 60%; }
table.samples td.refs { white-space: normal; min-width: 15em; }
.right { color: var(--ok); font-weight: 700; } .wrong { color: var(--bad); font-weight: 700; }
.refs { color: var(--muted); font-size: 13px; }
.notice { background: #fef9e7; border: 1px solid #f7dc6f; border-radius: 6px; padding: 8px 12px; font-size: 13px; }
footer { margin-top: 28px; }
"""

# Records load errors, CSP violations and images that did not decode into attributes of <html>.
SCRIPT = """(function () {
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(e.message ? String(e.message) : "failed to load " + (e.target && e.target.tagName));
  }, true);
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("blocked by the content security policy: " + e.violatedDirective);
  });
  window.addEventListener("load", function () {
    var images = Array.prototype.slice.call(document.images);
    var broken = images.filter(function (img) { return !(img.complete && img.naturalWidth > 0); }).length;
    var root = document.documentElement;
    root.setAttribute("data-images", String(images.length));
    root.setAttribute("data-broken-images", String(broken));
    root.setAttribute("data-height", String(root.scrollHeight));
    root.setAttribute("data-errors", JSON.stringify(errors));
    root.setAttribute("data-rendered", errors.length === 0 && broken === 0 ? "ok" : "failed");
  });
})();"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def page(title: str, body: str) -> str:
    """A complete, self-contained HTML page around `body` (already escaped)."""
    policy = (
        f"default-src 'none'; img-src data:; style-src '{_hash(STYLE)}'; script-src '{_hash(SCRIPT)}'; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        f'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def points(value: float) -> str:
    return f"{value:g}"


def meter(got: float, out_of: float) -> str:
    return f'<meter min="0" max="{out_of:g}" value="{got:g}" low="{0.5 * out_of:g}" optimum="{out_of:g}"></meter>'


# -- one submission ----------------------------------------------------------------------------------------


def _training_checks() -> set[tuple[str, str]]:
    from autograder.grader.checks import all_checks

    return {(c.part, c.name) for checks in all_checks().values() for c in checks if c.training}


def _check_rows(results) -> str:
    """The table of one part's checks: a row per check, but one row per unwritten TODO for the checks that wait
    for it, and one row for the part when every check failed alike (a missing module): the grouping of the CLI's
    table (autograder.public.score_table.check_groups)."""
    rows = []
    for item in check_groups(results):
        if isinstance(item, Group):
            rows.append(_group_row(item))
            continue
        r = item
        state = "pass" if r.passed else "fail"
        output = "" if r.passed else f'<pre class="output">{escape(r.output)}</pre>'
        rows.append(
            f'<tr class="check {state}" data-check="{escape(r.name)}" data-visibility="{escape(r.visibility)}">'
            f'<td class="num">{escape(r.number)}</td>'
            f'<td class="desc">{escape(r.description)} <code>{escape(r.name)}</code>{output}</td>'
            f'<td><span class="badge">{"PASS" if r.passed else "FAIL"}</span></td>'
            f'<td class="num">{points(r.score)} / {points(r.max_score)}</td></tr>'
        )
    return (
        '<table class="checks"><thead><tr><th class="num">#</th><th>check</th><th>result</th>'
        '<th class="num">points</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>"
    )


def _group_row(group: Group) -> str:
    """One row for the checks of a Group: its line (the TODO and the checks that wait for it; or the output every
    check of the part failed with), and the checks it stands for under a disclosure."""
    names = " ".join(r.name for r in group.results)
    listed = "".join(
        f"<li>{escape(r.number)} {escape(r.description)} <code>{escape(r.name)}</code></li>" for r in group.results
    )
    if group.todo:
        line = escape(group.line)
    else:
        line = (
            f"All {len(group.results)} checks of this part failed: "
            f'<pre class="output">{escape(group.results[0].output)}</pre>'
        )
    return (
        f'<tr class="check fail group" data-checks="{escape(names)}" data-todo="{escape(group.todo)}">'
        f'<td class="num">{escape(group.results[0].number)}{"&hellip;" * (len(group.results) > 1)}</td>'
        f'<td class="desc">{line}<details><summary class="muted">the {len(group.results)} '
        f'check{"s" * (len(group.results) > 1)}</summary><ul class="muted">{listed}</ul></details></td>'
        f'<td><span class="badge">FAIL</span></td>'
        f'<td class="num">0 / {points(group.max_score)}</td></tr>'
    )


def _scene_cell(scenes: dict, i: int, rows: int = 1) -> str:
    td = f'<td rowspan="{rows}">' if rows > 1 else "<td>"
    images = scenes.get("images")
    if images is None or i >= len(images):
        return f"{td}scene {i + 1}</td>"
    return (
        f'{td}<img class="scene" src="{figures.image_uri(images[i])}" '
        f'alt="hidden test scene {i + 1}" width="72" height="72"></td>'
    )


def _mark(caption: str, references: list[str]) -> str:
    return (
        '<span class="right" title="one of the references">&#10003;</span>'
        if caption in references
        else '<span class="wrong" title="not one of the references">&#10007;</span>'
    )


def _figure(kind: str, title: str, content: str, caption: str, wide: bool = False) -> str:
    return (
        f'<figure class="figure{" wide" if wide else ""}" data-figure="{kind}"><h3>{escape(title)}</h3>{content}'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _curves_figure(part: str, curves: dict, reference: dict) -> str:
    uri = figures.data_uri(figures.curves(curves, reference.get(part, {})))
    note = (
        "dashed: the reference solution trained the same way on the public data"
        if reference.get(part)
        else "the reference's curve is not available"
    )
    return _figure(
        "curves",
        "Training curve",
        f'<img class="plot" src="{uri}" alt="training loss per epoch">',
        f"Mean training loss per epoch of your model on the hidden training scenes; {note}.",
    )


def _captions_figure(part: str, captions: dict, scenes: dict) -> str:
    references = scenes["references"]
    styles = list(captions)
    styled = part == "stylenet"
    head = "".join(f"<th>{escape('your model' if s == 'greedy' else s)}</th>" for s in styles)
    rows = []
    for i, refs in enumerate(references):
        cells = []
        for s in styles:
            caption = captions[s][i] if i < len(captions[s]) else ""
            mark = _mark(caption, refs) if s in ("greedy", "factual") else ""
            cells.append(f"<td>{mark} {escape(caption) or '<em>(empty)</em>'}</td>")
        rows.append(
            f"<tr>{_scene_cell(scenes, i)}{''.join(cells)}"
            f'<td class="refs">{"<br>".join(escape(r) for r in refs)}</td></tr>'
        )
    table = (
        f'<table class="samples"><thead><tr><th>scene</th>{head}<th>reference captions</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    if styled:
        title = "Style swap"
        caption = (
            "The same scenes captioned by your trained StyleNet with the factual factor and with the romantic "
            "one (greedy); &#10003;: the factual caption is a reference."
        )
    else:
        title, caption = (
            "Captions of test scenes",
            (
                "Greedy captions of your trained model on the first "
                f"{len(references)} hidden test scenes; &#10003;: one of the "
                "scene's reference captions."
            ),
        )
    return _figure("styles" if styled else "captions", title, table, caption, wide=True)


def _attention_figure(attention: dict, scenes: dict) -> str:
    images = scenes.get("images") if scenes else None
    words = attention["words"]
    uri = figures.data_uri(figures.attention(attention["weights"][: len(words)], words, images, attention["hard"]))
    if attention["hard"]:
        caption = (
            "Hard attention: at each step the decoder reads the location of highest weight (outlined); the "
            "heat map is the distribution it was drawn from during training. Title: the word emitted."
        )
    else:
        caption = "Soft attention: the weights behind each emitted word (the word is above its map)."
    return _figure(
        "attention", "Attention maps", f'<img class="plot" src="{uri}" alt="attention maps">', caption, wide=True
    )


def _beams_figure(beams: dict, scenes: dict) -> str:
    rows = []
    for i, (captions, scores) in enumerate(zip(beams["captions"], beams["scores"])):
        refs = scenes["references"][i] if scenes and i < len(scenes["references"]) else []
        for rank, (caption, score) in enumerate(zip(captions, scores)):
            scene = _scene_cell(scenes or {}, i, len(captions)) if rank == 0 else ""
            shown = f"{score:.3f}" if math.isfinite(score) else "&minus;&infin;"
            rows.append(
                f'<tr>{scene}<td class="num">{rank + 1}</td><td>{_mark(caption, refs)} '
                f'{escape(caption) or "<em>(empty)</em>"}</td><td class="num">{shown}</td></tr>'
            )
    table = (
        '<table class="samples"><thead><tr><th>scene</th><th class="num">beam</th><th>caption</th>'
        '<th class="num">log p</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table>"
    )
    k = max((len(c) for c in beams["captions"]), default=0)
    return _figure(
        "beams",
        "Beam search",
        table,
        f"The reference beam search (width {k}) run on your trained model: "
        "each beam's caption and its total log-probability, best first.",
        wide=True,
    )


def part_figures(part: str, artifacts: dict, reference: dict) -> list[str]:
    """The figures of one part from what its checks kept. A figure whose data is missing is left out; one that
    cannot be drawn (data the keep helpers let through but a figure cannot use) is replaced by a note."""
    scenes = artifacts.get("scenes") or {}
    wanted = [
        ("curves", lambda: _curves_figure(part, artifacts["curves"], reference)),
        (
            "captions",
            lambda: _captions_figure(part, artifacts["captions"], scenes) if scenes.get("references") else None,
        ),
        ("attention", lambda: _attention_figure(artifacts["attention"], scenes)),
        ("beams", lambda: _beams_figure(artifacts["beams"], scenes)),
    ]
    out = []
    for key, draw in wanted:
        if not artifacts.get(key):
            continue
        try:
            figure = draw()
        except Exception as exc:  # noqa: BLE001 (a figure must never cost the report)
            figure = f'<p class="note">The {key} figure could not be drawn ({escape(type(exc).__name__)}).</p>'
        if figure:
            out.append(figure)
    return out


def _part_section(part, results, artifacts: dict, reference: dict, training: set, trained_figures: bool = True) -> str:
    got, out_of = sum(r.score for r in results), sum(r.max_score for r in results)
    body = _check_rows(results)
    trained = [r for r in results if (r.part, r.name) in training]
    if trained and not trained_figures:
        body += f'<p class="note no-figures">{escape(WITHOUT_TRAINED_FIGURES)}</p>'
    elif trained:
        shown = part_figures(part.module, artifacts, reference)
        if shown:
            body += '<div class="figures">' + "".join(shown) + "</div>"
        elif all(r.passed for r in trained):
            body += '<p class="note no-figures">No figures: the training run returned nothing a figure can show.</p>'
        else:
            numbers = ", ".join(r.number for r in trained if not r.passed)
            body += (
                f'<p class="note no-figures">No figures of your trained model: the training run of check '
                f"{escape(numbers)} did not return a trained model (see its message above).</p>"
            )
    return (
        f'<section class="part" id="part-{part.module}" data-part="{part.module}">'
        f"<header><h2>Part {part.number} &middot; {escape(part.title)} "
        f'<span class="muted">({part.module}.py)</span></h2>'
        f'<span class="score">{meter(got, out_of)} {points(got)} / {points(out_of)}</span></header>'
        f"{body}</section>"
    )


# Why a report may leave out the figures of the student's trained models: they draw what the student's code returned
# from a worker that held the hidden scenes and the references of earlier parts, so code written to do it can carry
# hundreds of bits of them out (docs/security.md, residual channels). A course that reuses the assignment and keeps
# its references past the due date hands out reports without them (`--no-trained-figures`).
WITHOUT_TRAINED_FIGURES = (
    "This report leaves out the figures of your trained model: they would show what your code "
    "returned while it held the hidden scenes. The training check's result is above."
)


def render_report(report, submission: str = "", generated: str | None = None, trained_figures: bool = True) -> str:
    """The feedback report of a GradeReport (engine.grade) as one HTML page. `submission` names it (escaped).
    trained_figures=False: without the figures of the student's trained models (WITHOUT_TRAINED_FIGURES)."""
    reference = reference_curves.load()
    training = _training_checks()
    totals = report.part_totals()
    parts = [p for p in PARTS if p.module in totals]
    summary = "".join(
        f'<tr><td><a href="#part-{p.module}">Part {p.number}</a></td><td>{escape(p.title)}</td>'
        f'<td>{meter(*totals[p.module])}</td><td class="num">{points(totals[p.module][0])} / '
        f"{points(totals[p.module][1])}</td></tr>"
        for p in parts
    )
    sections = "".join(
        _part_section(
            p,
            [r for r in report.results if r.part == p.module],
            report.artifacts.get(p.module, {}),
            reference,
            training,
            trained_figures,
        )
        for p in parts
    )
    generated = generated or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    hidden = any(r.visibility == "hidden" for r in report.results)
    shown = " and figures of models trained on hidden scenes" if trained_figures else ""
    notice = (
        ""
        if not hidden
        else f'<p class="notice">This report includes the results of hidden checks{shown}: give it to students '
        "when hidden results are released (after the due date).</p>"
    )
    notes = "".join(f"<li>{escape(n)}</li>" for n in report.notes)
    body = (
        f"<header><h1>Feedback report</h1>"
        f'<p class="meta">{escape(submission) + " &middot; " if submission else ""}graded {escape(generated)} '
        f"in {report.seconds:.0f} s</p>"
        f'<p class="total" data-score="{report.score:g}" data-max-score="{report.max_score:g}">Total: '
        f"{points(report.score)} / {points(report.max_score)}</p>{notice}"
        f'<table class="parts"><thead><tr><th>part</th><th>topic</th><th></th><th class="num">points</th></tr>'
        f"</thead><tbody>{summary}</tbody></table></header>"
        f"<main>{sections}</main>"
        f'<footer class="muted"><ul>{notes}</ul><p>Each failed check shows what it found; a hidden check shows '
        f"only the property it tests.</p></footer>"
    )
    return page(f"Feedback report{': ' + submission if submission else ''}", body)


def write_report(report, path: Path, submission: str = "", trained_figures: bool = True) -> Path:
    """Write the feedback report to `path` (folders created); return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_report(report, submission, trained_figures=trained_figures), encoding="utf-8")
    return path
