"""Feedback reports: every part, check and figure of a graded submission; nothing a student may not see;
student strings escaped; self-contained and small; figures that render in a headless browser; a failed or
hostile training run still gives a report. Most tests build a GradeReport from the checks' own keep helpers
on scenes drawn here (fast); one renders the report of the full reference grade (the session-scoped fixture
reference_report, tests/conftest.py) in headless Chromium."""

from __future__ import annotations

import json
import math
import re
from html import escape, unescape
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from autograder.grader import batch_jobs, sample
from autograder.grader import rubric as rubric_mod
from autograder.grader.checks import all_checks
from autograder.grader.context import GradingContext, hidden_seed
from autograder.grader.engine import CheckResult, GradeReport
from autograder.grader.intake import Submission
from autograder.grader.report import reference as reference_curves
from autograder.grader.report.html import render_report, write_report
from autograder.grader.training import SHOWN, SPECS, keep_attention, keep_beams, keep_run
from shared.encoder import L_GRID
from shared.parts import MODULES
from shared.scenes import make_scenes
from shared.vocab import T_MAX, encode_batch
from tests import browser

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "report.html"
SCREENSHOT = ROOT / "docs" / "examples" / "report.png"
LIMIT = 600 * 1024
TRAINED = {c.part: c.name for checks in all_checks().values() for c in checks if c.training}
FIGURES = {
    "show_and_tell": {"curves", "captions", "beams"},
    "attention": {"curves", "captions", "attention"},
    "reinforce": {"curves", "captions", "attention"},
    "lstm_a": {"curves", "captions"},
    "stylenet": {"curves", "styles"},
}
STAFF = "STAFF-ONLY: the hidden input was [3, 1, 4]"
HOSTILE = "<script>document.title='owned'</script><img src=x onerror=alert(1)>"


# -- reading a report ------------------------------------------------------------------------------------


class Structure(HTMLParser):
    """Per part section: its checks (a row's data-check, or the data-checks of a row standing for several: a TODO
    they wait for, a missing module), its rows, figures (data-figure) and whether it says it has none."""

    def __init__(self):
        super().__init__()
        self.parts: dict[str, dict] = {}
        self.current = None
        self.scripts = 0
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "img":
            self.sources.append(a.get("src", ""))
        if tag == "section" and "data-part" in a:
            self.current = self.parts.setdefault(
                a["data-part"], {"checks": [], "rows": [], "figures": [], "no_figures": False}
            )
        elif self.current is not None:
            if tag == "tr" and "data-check" in a:
                self.current["checks"].append(a["data-check"])
                self.current["rows"].append(a["data-check"])
            if tag == "tr" and "data-checks" in a:
                self.current["checks"] += a["data-checks"].split()
                self.current["rows"].append(a.get("data-todo") or "all")
            if tag == "figure" and "data-figure" in a:
                self.current["figures"].append(a["data-figure"])
            if "no-figures" in (a.get("class") or "").split():
                self.current["no_figures"] = True


def structure(text: str) -> Structure:
    parsed = Structure()
    parsed.feed(text)
    return parsed


def visible_text(text: str) -> str:
    """The page without its embedded PNGs (base64 holds any short digit string by chance)."""
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:", text)


# -- a report built from the checks' own keep helpers --------------------------------------------------------


class FakeContext:
    """What keep_run and friends use of a GradingContext: the hidden test scenes (here, scenes of seed 4242
    drawn without their pixels, as from the encoder cache) and keep."""

    keep = GradingContext.keep
    take_artifacts = GradingContext.take_artifacts

    def __init__(self):
        self._artifacts = {}
        self.data = SimpleNamespace(test=SimpleNamespace(scenes=make_scenes(12, 4242, keep_images=False)))


def _tokens(captions: list[str]) -> torch.Tensor:
    """Greedy decoding's layout: (N, T_MAX), no START column, PAD after END."""
    ids = encode_batch(captions)[:, 1:]
    return torch.cat([ids, torch.zeros(len(captions), 1, dtype=torch.long)], 1)


def keep_everything(ctx: FakeContext, captions: list[str] | None = None) -> None:
    """What each training check keeps from a well-behaved run (as the recipes return it)."""
    test = ctx.data.test.scenes
    captions = captions or [refs[0] for refs in test.references]
    tokens = _tokens(captions)
    maps = torch.softmax(torch.randn(SHOWN, T_MAX, L_GRID, generator=torch.Generator().manual_seed(0)) * 3, -1)
    losses = [1.0 / (1 + e) for e in range(12)]
    for part in ("show_and_tell", "attention", "reinforce", "lstm_a"):
        keep_run(ctx, part, curves={"loss": losses}, captions={"greedy": tokens})
    keep_beams(
        ctx,
        "show_and_tell",
        {"tokens": torch.stack([tokens[:SHOWN]] * 3, 1), "scores": torch.tensor([[-0.1, -1.5, -float("inf")]] * SHOWN)},
    )
    keep_attention(ctx, "attention", {"weights": maps, "tokens": tokens[:SHOWN]})
    keep_attention(ctx, "reinforce", {"weights": maps, "tokens": tokens[:SHOWN]}, hard=True)
    keep_run(
        ctx,
        "stylenet",
        curves={"factual": losses, "styled": [2 * x for x in losses]},
        captions={"factual": tokens, "romantic": _tokens(["the red circle sits happily"] * len(captions))},
    )


def fake_report(ctx: FakeContext, training_passed: bool = True) -> GradeReport:
    """Every check of the rubric: public checks pass but the first of each part, which fails with a hostile
    message; hidden checks pass but the second-last, which fails with a staff note."""
    results = []
    rubric = rubric_mod.load()
    for part, checks in all_checks().items():
        for i, chk in enumerate(checks):
            entry = rubric[part][chk.name]
            passed = training_passed if chk.training else i not in (0, len(checks) - 2)
            output = (
                "passed"
                if passed
                else (
                    f"your code raised ValueError: {HOSTILE}"
                    if entry.visibility == "public"
                    else f"failed: {chk.description}"
                )
            )
            results.append(
                CheckResult(
                    part,
                    chk.name,
                    f"{MODULES.index(part) + 1}.{i + 1}",
                    chk.description,
                    entry.points if passed else 0.0,
                    entry.points,
                    entry.visibility,
                    output,
                    0.1,
                    "" if passed else STAFF,
                )
            )
    return GradeReport(
        results=results, notes=["student code ran in a separate process"], seconds=42.0, artifacts=ctx.take_artifacts()
    )


@pytest.fixture(scope="module")
def full():
    ctx = FakeContext()
    keep_everything(ctx)
    report = fake_report(ctx)
    return report, render_report(report, submission=f"alice {HOSTILE}")


def test_every_part_every_check_and_the_figures_of_every_trained_part(full):
    report, text = full
    parsed = structure(text)
    assert list(parsed.parts) == list(MODULES)
    for part in MODULES:
        assert parsed.parts[part]["checks"] == [r.name for r in report.results if r.part == part], part
        expected = FIGURES.get(part, set())
        assert set(parsed.parts[part]["figures"]) == expected, part
        assert not parsed.parts[part]["no_figures"], part
    assert all(src.startswith("data:image/png;base64,") for src in parsed.sources)
    assert len(parsed.sources) >= 5 + 4 * 5  # five curves and attention maps, scene thumbnails


def test_a_report_without_the_trained_models_figures_draws_none_and_says_so(full):
    """--no-trained-figures (grade --report, batch --reports): every check as before, no figure drawn from what the
    student's code returned in a training run (it held the hidden scenes and the references of earlier parts), and
    a note in each trained part saying so."""
    from autograder.grader.report.html import WITHOUT_TRAINED_FIGURES

    report, _ = full
    text = render_report(report, submission="alice", trained_figures=False)
    parsed = structure(text)
    assert list(parsed.parts) == list(MODULES)
    for part in MODULES:
        assert parsed.parts[part]["checks"] == [r.name for r in report.results if r.part == part], part
        assert parsed.parts[part]["figures"] == [], part
        assert parsed.parts[part]["no_figures"] == (part in FIGURES), part
    assert not parsed.sources and text.count(escape(WITHOUT_TRAINED_FIGURES)) == len(FIGURES)
    assert "figures of models trained on hidden scenes" not in text


def test_a_batch_hands_the_choice_to_every_job(tmp_path):
    (tmp_path / "ada").mkdir()
    ada = Submission("ada", "", tmp_path / "ada")
    assert batch_jobs._prepare(ada, None, True, "kit", trained_figures=False).trained_figures is False
    assert batch_jobs._prepare(ada, None, True, "kit").trained_figures is True


def test_only_what_students_may_see(full):
    report, text = full
    shown = visible_text(text)
    assert STAFF not in shown and "STAFF-ONLY" not in shown
    assert str(hidden_seed()) not in shown
    for r in report.results:
        if not r.passed:
            assert f"{r.output}".split(":")[0] in shown
    # A hidden check's row shows only the property it tests.
    hidden = next(r for r in report.results if r.visibility == "hidden" and not r.passed)
    assert f"failed: {hidden.description}" in shown


def test_student_controlled_strings_are_escaped(full):
    _, text = full
    assert HOSTILE not in text and "<img src=x" not in text
    assert "&lt;script&gt;document.title=&#x27;owned&#x27;&lt;/script&gt;" in text
    assert structure(text).scripts == 1  # the report's own, allowed by its hash


def test_the_report_is_self_contained_and_small(full):
    _, text = full
    shown = visible_text(text)
    assert not re.search(r"(?:src|href)\s*=\s*[\"'](?!data:|#)", shown), "a resource outside the page"
    assert "http://" not in shown and "https://" not in shown and "@import" not in shown and "url(" not in shown
    assert "default-src 'none'" in shown
    assert len(text.encode()) < LIMIT


def test_a_report_of_the_public_checks_has_no_hidden_material():
    """grade --public-only --report: what may be given to students before the due date."""
    ctx = FakeContext()
    keep_everything(ctx)  # even if something were kept, no training check ran: no figures
    full = fake_report(ctx)
    public = GradeReport(results=[r for r in full.results if r.visibility == "public"], artifacts=full.artifacts)
    text = render_report(public)
    parsed = structure(text)
    assert all(not p["figures"] and not p["no_figures"] for p in parsed.parts.values())
    assert 'class="notice"' not in text and "data:image/png" not in text
    assert 'class="notice"' in render_report(full)


def stub_report() -> GradeReport:
    """Bleu as a stub grades (each check waits for an unwritten TODO; the public ones show its message, the hidden
    ones that it is one), with a hidden check at a TODO no public check shows and one that passed; decoding
    missing from the submission."""
    at = {"ngram_counts": 113, "clipped_counts": 142, "corpus_bleu": 181, "leak_31415": 99}
    waits = {1: "ngram_counts", 2: "clipped_counts", 6: "ngram_counts", 12: "leak_31415", 13: None}
    results = []
    for name, entry in rubric_mod.load()["bleu"].items():
        function = waits.get(entry.number, "corpus_bleu")
        if function is None:
            output, todo = "passed", ""
        elif entry.visibility == "public":
            output = (
                f"your code raised NotImplementedError: Part 3 (bleu): {function} is not implemented yet "
                f"(at bleu.py:{at[function]})"
            )
            todo = f"TODO {function} (bleu.py:{at[function]})"
        else:
            output, todo = (
                "your code raised NotImplementedError (an unwritten TODO)",
                f"TODO {function} (bleu.py:{at[function]})",
            )
        results.append(
            CheckResult(
                "bleu",
                name,
                f"3.{entry.number}",
                name.replace("_", " "),
                entry.points if function is None else 0.0,
                entry.points,
                entry.visibility,
                output,
                0.1,
                "",
                todo,
            )
        )
    for name, entry in rubric_mod.load()["decoding"].items():
        results.append(
            CheckResult(
                "decoding",
                name,
                f"2.{entry.number}",
                name.replace("_", " "),
                0.0,
                entry.points,
                entry.visibility,
                "decoding.py is missing from the submission",
                0.0,
            )
        )
    return GradeReport(results=results, seconds=1.0)


def test_one_row_per_unwritten_todo_and_one_for_a_missing_module():
    """The report groups checks as `check` does (autograder.public.score_table.check_groups): one row per TODO naming
    the checks that wait for it, hidden ones included, never a TODO only a hidden check raised; one row for a part
    whose module is missing."""
    from autograder.public.score_table import table

    report = stub_report()
    text = render_report(report)
    parsed = structure(text)
    rubric = rubric_mod.load()
    assert parsed.parts["bleu"]["rows"] == [
        "TODO ngram_counts (bleu.py:113)",
        "TODO clipped_counts (bleu.py:142)",
        "TODO corpus_bleu (bleu.py:181)",
        "captions_are_split_on_any_whitespace",
        "bleu_functions_leave_their_inputs_unchanged",
    ]
    assert sorted(parsed.parts["bleu"]["checks"]) == sorted(rubric["bleu"])
    lines = [unescape(line) for line in re.findall(r'<td class="desc">(TODO [^<]*)<details>', text)]
    assert lines[2] == (
        "TODO corpus_bleu (bleu.py:181): 8 checks wait for it (3.3, 3.4, 3.5, 3.7, 3.8, 3.9, 3.10, 3.11: 10 points)"
    )
    assert text.count("is not implemented yet") == 0 and "leak_31415" not in text
    assert (
        "your code raised NotImplementedError (an unwritten TODO)<" in text and "bleu.py:99" not in text
    )  # its own row
    # The same line as the CLI's table for the same checks.
    public = GradeReport(results=[r for r in report.results if r.visibility == "public"])
    public_lines = [
        unescape(line) for line in re.findall(r'<td class="desc">(TODO [^<]*)<details>', render_report(public))
    ]
    assert public_lines == [line.strip() for line in table(public).splitlines() if line.startswith("    TODO ")]
    assert (
        public_lines[2] == "TODO corpus_bleu (bleu.py:181): 5 checks wait for it (3.3, 3.4, 3.5, 3.9, 3.10: 6 points)"
    )
    # A missing module: one row for its part, its message once, every check named in it.
    assert parsed.parts["decoding"]["rows"] == ["all"]
    assert sorted(parsed.parts["decoding"]["checks"]) == sorted(rubric["decoding"])
    assert text.count("decoding.py is missing from the submission") == 1
    total = sum(e.points for e in rubric["decoding"].values())
    assert f'<td class="num">0 / {total:g}</td>' in text


def test_a_failed_training_run_still_gives_a_report(tmp_path):
    ctx = FakeContext()
    # Malformed replies (what a broken or hostile student run may return): each is left out, none raises.
    keep_run(ctx, "show_and_tell", curves={"loss": [float("nan"), 1.0]}, captions={"greedy": torch.zeros(2, 3)})
    keep_run(ctx, "attention", curves={"loss": "0.5"}, captions={"greedy": torch.full((12, T_MAX), 999)})
    keep_attention(ctx, "attention", {"weights": torch.ones(SHOWN, 3, L_GRID), "tokens": torch.ones(SHOWN, 4).long()})
    keep_attention(
        ctx,
        "reinforce",
        {"weights": torch.full((SHOWN, T_MAX, L_GRID), float("inf")), "tokens": torch.ones(SHOWN, T_MAX).long()},
    )
    keep_beams(ctx, "show_and_tell", {"tokens": torch.ones(SHOWN, 3, T_MAX), "scores": torch.zeros(SHOWN, 3)})
    keep_run(ctx, "lstm_a", curves={"loss": None}, captions={"greedy": None})
    assert ctx._artifacts == {}
    report = fake_report(ctx, training_passed=False)
    parsed = structure(write_report(report, tmp_path / "r.html").read_text())
    for part in TRAINED:
        assert parsed.parts[part]["figures"] == [] and parsed.parts[part]["no_figures"], part
    # Artifacts that pass the keep helpers but not the figures (a map that is not a square grid) cost only the
    # figure: the others are drawn.
    ctx = FakeContext()
    keep_everything(ctx)
    ctx._artifacts["attention"]["attention"]["weights"] = torch.ones(SHOWN, T_MAX, 7)
    ctx._artifacts["reinforce"]["attention"] = {"weights": None, "words": [["a"]], "hard": True}
    text = render_report(fake_report(ctx))
    parsed = structure(text)
    assert set(parsed.parts["attention"]["figures"]) == FIGURES["attention"]
    assert set(parsed.parts["reinforce"]["figures"]) == FIGURES["reinforce"] - {"attention"}
    assert "The attention figure could not be drawn (TypeError)" in text


def test_the_shown_scenes_are_the_first_test_scenes_drawn_again():
    ctx = FakeContext()
    keep_everything(ctx)
    scenes = ctx._artifacts["show_and_tell"]["scenes"]
    again = make_scenes(12, 4242)
    assert scenes["references"] == again.references[:SHOWN]
    assert torch.equal(scenes["images"], again.images[:SHOWN])
    assert ctx._artifacts["show_and_tell"]["captions"]["greedy"] == [r[0] for r in again.references[:SHOWN]]


def epochs_of(part: str) -> int:
    return SPECS[part].epochs


def test_reference_curves_match_the_checks():
    curves = json.loads(reference_curves.CURVES_FILE.read_text())["parts"]
    assert set(curves) == set(TRAINED) == set(SPECS)
    for part, entry in curves.items():
        epochs = epochs_of(part)
        assert entry["epochs"] == epochs, f"{part}: rerun python -m autograder reference-curves"
        assert set(entry["curves"]) == ({"factual", "styled"} if part == "stylenet" else {"loss"})
        for values in entry["curves"].values():
            assert len(values) == epochs and all(math.isfinite(v) and v > 0 for v in values)
            assert values[-1] < 0.5 * values[0], f"{part}: the reference's loss should fall"


def test_the_browser_sees_every_figure_and_would_see_a_broken_one(full, tmp_path):
    _, text = full
    page = tmp_path / "report.html"
    page.write_text(text)
    rendered = browser.render(page, tmp_path)
    assert rendered.get("data-rendered") == "ok", rendered
    assert int(rendered["data-images"]) == len(structure(text).sources) and rendered["data-broken-images"] == "0"
    assert int(rendered["data-height"]) > 3000
    # The same page with one figure corrupted and one image from outside: the page's script reports both.
    first = structure(text).sources[0]
    broken = text.replace(first, "data:image/png;base64,AAAA", 1).replace(
        "</main>", '<img src="https://example.org/x.png" alt=""></main>', 1
    )
    page.write_text(broken)
    rendered = browser.render(page, tmp_path)
    assert rendered.get("data-rendered") == "failed" and rendered["data-broken-images"] == "2", rendered
    assert "content security policy: img-src" in rendered["data-errors"], rendered


# -- the real thing ------------------------------------------------------------------------------------------


@pytest.mark.xdist_group("full-grade")  # shares the full reference grade with tests/grader/test_grader.py
def test_the_report_of_a_real_grade_renders_with_every_figure(reference_report, tmp_path):
    report = reference_report
    assert set(report.artifacts) == set(TRAINED)
    path = write_report(report, tmp_path / "report.html", submission="reference solutions")
    text = path.read_text()
    parsed = structure(text)
    for part in MODULES:
        assert parsed.parts[part]["checks"] == [r.name for r in report.results if r.part == part]
        assert set(parsed.parts[part]["figures"]) == FIGURES.get(part, set()), part
    for part in TRAINED:
        kept = report.artifacts[part]
        assert kept["scenes"]["images"] is not None and len(kept["scenes"]["references"]) == SHOWN
        curve = next(iter(kept["curves"].values()))
        # one loss per epoch trained: a run ends at its budget or once the grader has seen it reach the threshold
        assert 1 <= len(curve) <= epochs_of(part) and all(math.isfinite(v) for v in curve), part
    assert str(hidden_seed()) not in visible_text(text)
    assert len(text.encode()) < LIMIT

    rendered = browser.render(path, tmp_path)
    assert rendered.get("data-rendered") == "ok", rendered
    assert int(rendered["data-images"]) == len(parsed.sources) > 20
    shot = browser.pixels(browser.screenshot(path, tmp_path / "report.png", tmp_path))
    assert shot.shape[0] >= 2000 and shot.std() > 0.05
    assert len({tuple(p) for p in (shot[::7, ::7] * 255).astype(int).reshape(-1, 3).tolist()}) > 50


def test_the_example_report_is_current():
    """docs/examples/report.html (python -m autograder demo --report docs/examples/report.html) has the
    current parts and checks, and figures where the sample's training runs (autograder/grader/sample.py)."""
    parsed = structure(EXAMPLE.read_text())
    rubric = rubric_mod.load()
    assert list(parsed.parts) == list(MODULES), "regenerate docs/examples/report.html"
    for part in MODULES:
        assert sorted(parsed.parts[part]["checks"]) == sorted(rubric[part]), (
            f"{part}: regenerate docs/examples/report.html"
        )
    trains = set(sample.FROM_REFERENCE) | {"lstm_a"}  # lstm_a's edit swaps A2 and A3; A4 still trains
    for part in TRAINED:
        if part in trains:
            assert set(parsed.parts[part]["figures"]) == FIGURES[part], part
        else:  # the stub (reinforce), the missing module (stylenet)
            assert parsed.parts[part]["no_figures"], part
    assert len(EXAMPLE.read_bytes()) < LIMIT
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and SCREENSHOT.stat().st_size > 50_000
