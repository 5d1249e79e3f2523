"""Which submissions share code: per part, the pairwise similarity of the submitted modules, the stubs' given
code removed as boilerplate. For the course staff only.

    python -m autograder similarity SUBMISSIONS --out DIR [--threshold 0.5]
    python -m autograder batch SUBMISSIONS --out DIR --similarity

SUBMISSIONS is what `batch` grades (a Gradescope export, or a folder of student folders or zips: intake.py reads
it the same way); DIR the batch's output folder. Writes DIR/similarity.csv (every pair of submissions that both hold
a part's module: the part, the two ids, each side's share of its own code found in the other, the tokens they share)
and DIR/similarity.html (per part, the pairs at or above the threshold, their matching regions marked side by side),
both readable by their owner alone; summary.html links the report. Never hand either out: they name students.

The measure is copydetect's (winnowed k-gram fingerprints of the token stream, in which every variable, function and
class name is one letter: renaming changes nothing, and fingerprints do not depend on where a function sits in the
file). The part's stub (assignments/<part>.py: docstrings, signatures, given helpers) is boilerplate: its lines are
removed from each module before fingerprinting, and its fingerprints from what is left, so code every student
received matches no one. The k-gram hash is a stable one (_stable_kgrams): the same modules score the same in every
run. A side's similarity is the share of its fingerprinted tokens found in the
other module; a pair's score is the larger of the two sides (a short module copied into a long one still shows).
"""

from __future__ import annotations

import contextlib
import csv
import io
import tempfile
from dataclasses import dataclass
from html import escape
from pathlib import Path

from shared.parts import BY_MODULE, MODULES

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "assignments"
REPORT, TABLE = "similarity.html", "similarity.csv"
THRESHOLD = 0.5
NOISE_TOKENS = 25  # copydetect's noise threshold: shorter matches are not counted (in filtered characters)
GUARANTEE_TOKENS = 30  # a match this long is always found (winnowing's window = guarantee - noise + 1)
CONTEXT_LINES = 3  # unmarked lines kept around each match in the report


@dataclass(frozen=True)
class Pair:
    part: str
    a: str
    b: str
    similarity_a: float  # share of a's fingerprinted code found in b
    similarity_b: float
    tokens: int  # filtered characters a shares with b
    marks_a: list  # (start, end) character ranges of a's text that match b
    marks_b: list

    @property
    def score(self) -> float:
        return max(self.similarity_a, self.similarity_b)


def _copydetect():
    try:
        import copydetect
        import copydetect.utils
    except ImportError:
        raise ValueError('similarity needs copydetect: pip install -e ".[staff]" (docs/ta.md)') from None
    return copydetect


def _stable_kgrams(string: str, k: int):
    """copydetect.utils.hashed_kgrams with a hash that is the same in every process: copydetect's uses Python's
    hash(), salted per process (PYTHONHASHSEED), so winnowing would keep other fingerprints, and a pair would score
    differently, on every run."""
    import hashlib

    import numpy as np

    return np.array(
        [
            int.from_bytes(hashlib.blake2b(string[i : i + k].encode(), digest_size=8).digest(), "little", signed=True)
            for i in range(len(string) - k + 1)
        ],
        dtype=np.int64,
    )


@contextlib.contextmanager
def _stable_hashes():
    """Within the block, copydetect fingerprints with _stable_kgrams (its module-level k-gram hash, swapped back
    after)."""
    utils = _copydetect().utils
    original, utils.hashed_kgrams = utils.hashed_kgrams, _stable_kgrams
    try:
        yield
    finally:
        utils.hashed_kgrams = original


def _fingerprint(text: str, boilerplate=()):
    CodeFingerprint = _copydetect().CodeFingerprint

    with _stable_hashes():
        return CodeFingerprint(
            "module.py",
            NOISE_TOKENS,
            GUARANTEE_TOKENS - NOISE_TOKENS + 1,
            list(boilerplate),
            language="python",
            fp=io.StringIO(text),
        )


def boilerplate(part: str, stubs: Path = STUBS) -> set:
    """The fingerprints of the part's stub: the code every student was given."""
    return _fingerprint((Path(stubs) / f"{part}.py").read_text(encoding="utf-8")).hashes


def _quiet_compare(a, b):
    """copydetect.compare_files without its numpy warnings for a module that is all boilerplate."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _copydetect().compare_files(a, b)


@dataclass(frozen=True)
class Written:
    """What a student wrote in a module: its lines that are not among the stub's, joined (`text`), and where each
    lies (`lines`: (offset in `text`, offset in the module, length), in order)."""

    text: str
    lines: list

    def in_module(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """`ranges` of `text` as ranges of the module, split at line ends."""
        found = []
        for start, end in ranges:
            for at, origin, length in self.lines:
                a, b = max(start, at), min(end, at + length)
                if b > a:
                    found.append((origin + a - at, origin + b - at))
        return found


def written(text: str, stub: str) -> Written:
    """The lines of `text` that are not lines of the stub `stub` (compared without their indentation, wherever they
    stand: a student may move a function). Removing the given code itself, not only its fingerprints, leaves no
    fingerprint that straddles a given docstring and the first line a student wrote below it, which every correct
    module shares."""
    given = {line.strip() for line in stub.splitlines()}
    pieces, kept, at, origin = [], [], 0, 0
    for line in text.splitlines(keepends=True):
        if line.strip() and line.strip() not in given:
            kept.append((at, origin, len(line)))
            pieces.append(line)
            at += len(line)
        origin += len(line)
    return Written("".join(pieces), kept)


def compare(part: str, modules: dict[str, str], stubs: Path = STUBS) -> list[Pair]:
    """Every pair of `modules` ({submission id: text of its <part>.py}), sorted by id: what each student wrote
    (written: the stub's lines removed), fingerprinted without the stub's fingerprints (given code moved elsewhere
    matches no one either). The marks are ranges of the modules' own text."""
    stub = (Path(stubs) / f"{part}.py").read_text(encoding="utf-8")
    given = boilerplate(part, stubs)
    own = {ident: written(text, stub) for ident, text in sorted(modules.items())}
    prints = {ident: _fingerprint(w.text, given) for ident, w in own.items()}
    ids = list(prints)
    pairs = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            tokens, (sim_a, sim_b), (slices_a, slices_b) = _quiet_compare(prints[a], prints[b])
            pairs.append(
                Pair(
                    part,
                    a,
                    b,
                    float(sim_a),
                    float(sim_b),
                    int(tokens),
                    own[a].in_module(_ranges(slices_a)),
                    own[b].in_module(_ranges(slices_b)),
                )
            )
    return pairs


def _ranges(slices) -> list[tuple[int, int]]:
    return [(int(s), int(e)) for s, e in zip(*slices)] if len(slices) and len(slices[0]) else []


def submitted_modules(submissions_root: Path) -> dict[str, dict[str, str]]:
    """{part: {submission id: its module's text}} for every submission under `submissions_root` that holds the part's
    module (zips extracted into a temporary folder; a submission that cannot be read is left out)."""
    from autograder.grader.intake import IntakeError, discover, unpack

    found: dict[str, dict[str, str]] = {part: {} for part in MODULES}
    with tempfile.TemporaryDirectory(prefix="captionkit-similarity-") as tmp:
        for submission in discover(submissions_root):
            try:
                folder = unpack(submission, Path(tmp))
            except (IntakeError, OSError):
                continue
            for part in MODULES:
                path = folder / f"{part}.py"
                if path.is_file() and not path.is_symlink():
                    found[part][submission.id] = path.read_bytes()[: 1024 * 1024].decode("utf-8", "replace")
    return found


def write_table(pairs: list[Pair], path: Path) -> Path:
    """DIR/similarity.csv: one row per pair, highest score first."""
    from autograder.grader.grades_table import safe_cell

    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["part", "a", "b", "score", "similarity_a", "similarity_b", "shared_tokens"])
        for p in sorted(pairs, key=lambda p: (-p.score, p.part, p.a, p.b)):
            writer.writerow(
                [
                    safe_cell(v)
                    for v in (
                        p.part,
                        p.a,
                        p.b,
                        round(p.score, 4),
                        round(p.similarity_a, 4),
                        round(p.similarity_b, 4),
                        p.tokens,
                    )
                ]
            )
    return path


def marked(text: str, ranges: list[tuple[int, int]], context: int = CONTEXT_LINES) -> str:
    """`text` escaped, each range's part of every line in <mark>, lines further than `context` from any mark elided
    ("…"). Marks never span lines, so every line's tags are balanced."""
    merged: list[list[int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        elif b > a:
            merged.append([a, b])
    spans, at = [], 0
    for line in text.split("\n"):
        spans.append((at, at + len(line)))
        at += len(line) + 1
    cut = [[(max(s, a), min(e, b)) for a, b in merged if min(e, b) > max(s, a)] for s, e in spans]
    hit = [i for i, c in enumerate(cut) if c]
    keep = {j for i in hit for j in range(i - context, i + context + 1)}
    shown, skipped = [], False
    for i, ((s, e), parts) in enumerate(zip(spans, cut)):
        if i not in keep:
            shown += [] if skipped else ["…"]
            skipped = True
            continue
        skipped, line, pos = False, "", s
        for a, b in parts:
            line += escape(text[pos:a]) + f"<mark>{escape(text[a:b])}</mark>"
            pos = b
        shown.append(line + escape(text[pos:e]))
    return "\n".join(shown)


def render(pairs: list[Pair], modules: dict[str, dict[str, str]], threshold: float, generated: str = "") -> str:
    """The report page: per part, the pairs with a score at or above `threshold` and their matches side by side."""
    from autograder.grader.report.html import page

    sections = []
    for part in MODULES:
        mine = [p for p in pairs if p.part == part]
        flagged = sorted((p for p in mine if p.score >= threshold), key=lambda p: (-p.score, p.a, p.b))
        top = max((p.score for p in mine), default=0.0)
        blocks = []
        for p in flagged:
            blocks.append(
                f'<h3 class="pair" data-pair="{escape(p.a)}|{escape(p.b)}" data-score="{p.score:.3f}">'
                f"{escape(p.a)} and {escape(p.b)}: {p.score:.0%} "
                f'<span class="muted">({escape(p.a)}: {p.similarity_a:.0%} of its code found in {escape(p.b)}; '
                f"{escape(p.b)}: {p.similarity_b:.0%})</span></h3>"
                f'<table class="sidebyside"><thead><tr><th>{escape(p.a)}/{part}.py</th><th>{escape(p.b)}/{part}.py'
                f'</th></tr></thead><tbody><tr><td><pre class="output">{marked(modules[part][p.a], p.marks_a)}'
                f'</pre></td><td><pre class="output">{marked(modules[part][p.b], p.marks_b)}</pre></td></tr>'
                "</tbody></table>"
            )
        summary = (
            f'<p class="note">{len(modules[part])} submissions hold {part}.py; {len(mine)} pairs, '
            f"{len(flagged)} at or above {threshold:.0%}; the highest score {top:.0%}.</p>"
        )
        sections.append(
            f'<section class="part" id="{part}" data-flagged="{len(flagged)}"><header><h2>Part '
            f"{BY_MODULE[part].number}: {escape(BY_MODULE[part].title)}</h2></header>{summary}"
            + "".join(blocks)
            + "</section>"
        )
    body = (
        "<header><h1>Similarity report</h1>"
        f'<p class="meta">{escape(generated)}</p>'
        '<p class="notice">For course staff: this page names students and shows their code. A high score '
        "is a reason to read both modules, not a finding: short functions written from the same docstring can "
        "agree. The stubs' given code is removed before comparing; marked text is what the two share.</p>"
        f"</header><main>{''.join(sections)}</main>"
    )
    return page("Similarity report", body)


def write(submissions_root: Path, out: Path, threshold: float = THRESHOLD, stubs: Path = STUBS) -> list[Pair]:
    """Compare every part's modules under `submissions_root`; write out/similarity.csv and out/similarity.html
    (owner-only); return the pairs."""
    import time

    from autograder.grader.grades_table import owner_only

    if not 0 < threshold <= 1:
        raise ValueError(f"--threshold: expected a share in (0, 1], got {threshold}")
    modules = submitted_modules(submissions_root)
    pairs = [p for part in MODULES for p in compare(part, modules[part], stubs)]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    owner_only(write_table(pairs, out / TABLE))
    generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (out / REPORT).write_text(render(pairs, modules, threshold, generated), encoding="utf-8")
    owner_only(out / REPORT)
    return pairs


def link_from_summary(submissions_root: Path, out: Path) -> Path | None:
    """Write out/summary.html again, now linking the report, where a batch wrote one (its rows read back from the
    results.json files, as a resumed batch reads them); None where there is no summary."""
    from autograder.grader.grades_table import row_from_results
    from autograder.grader.intake import discover
    from autograder.grader.report import write_summary

    if not (Path(out) / "summary.html").is_file():
        return None
    rows = []
    for s in discover(submissions_root):
        results = Path(out) / s.id / "results.json"
        rows.append(
            row_from_results(s, results)
            if results.is_file()
            else {"id": s.id, "name": s.name, "status": "grader error: no results"}
        )
    return write_summary(rows, out)
