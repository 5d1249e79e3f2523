"""The part notebooks and their otter tests: generated from one source per part without drift; every
reference notebook (solutions/) runs top to bottom without an error and passes its grader.check; every
stub notebook (assignments/) shows each unfinished TODO as one line and its grader.check lists the failed
public checks with the grader's messages.

Notebooks run with nbclient in a copy of assignments/ and solutions/ under the test's temporary folder, on a
kernel of this interpreter, with the data cache in a temporary folder shared by the test session: nothing is
written into the repository.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest
from otter.test_files import ExceptionTestFile

from autograder.grader import rubric
from autograder.grader.checks import checks_of
from autograder.public.otter_checks import PublicCheckFailed, PublicChecks
from instructor import notebooks
from instructor.__main__ import main
from shared.notebook import setup, start, todo_line
from shared.parts import BY_MODULE, MODULES
from tests.kernels import kernel_spec, notebook_env, run_notebook, warm_data_cache

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "captionkit-notebook-test"
CELL_TIMEOUT = 300  # seconds per cell; a notebook takes well under a minute


# ----------------------------------------------------------------------------------------- generation


def test_committed_notebooks_and_tests_match_their_sources():
    drifted = notebooks.drift(ROOT, notebooks.generate())
    assert not drifted, "run `python -m instructor notebooks`:\n" + "\n".join(diff[:1500] for diff in drifted.values())


def test_every_part_has_a_source():
    assert sorted(p.stem for p in notebooks.SOURCES.glob("*.py")) == sorted(MODULES)


def test_check_mode_reports_a_hand_edit_and_a_stray_test_file(tmp_path, capsys):
    for rel, text in notebooks.generate().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    shutil.copytree(ROOT / "assignments" / notebooks.FIGURES, tmp_path / "assignments" / notebooks.FIGURES)
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 0
    capsys.readouterr()

    (tmp_path / "assignments" / notebooks.figure_path("decoding")).unlink()
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 1
    assert (
        "assignments/figures/decoding.png is missing: run `python -m instructor notebooks --figures`"
        in capsys.readouterr().out
    )
    shutil.copy(ROOT / "assignments" / notebooks.figure_path("decoding"), tmp_path / "assignments" / "figures")

    # a figure drawn before its sources changed (here: stamped with another digest) is stale
    figure = tmp_path / "assignments" / notebooks.figure_path("bleu")
    fresh = figure.read_bytes()
    after_header, stamp_chunk = 33, 4 + 4 + len(notebooks.FIGURE_STAMP) + 1 + 64 + 4
    unstamped = fresh[:after_header] + fresh[after_header + stamp_chunk :]
    assert notebooks.stamp_of(unstamped) is None and notebooks.stamp_of(fresh) == notebooks.sources_digest("bleu")
    stale = notebooks.stamped(unstamped, "0" * 64)
    figure.write_bytes(stale)
    assert np.array_equal(pixels(stale), pixels(fresh))
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 1
    assert (
        "assignments/figures/bleu.png was drawn from other sources than the kit's now (instructor/notebook_sources/"
        "bleu.py, solutions/bleu.py, shared/...): run `python -m instructor notebooks --figures --part bleu`"
        in capsys.readouterr().out
    )
    figure.write_bytes(fresh)
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 0
    capsys.readouterr()

    path = tmp_path / "assignments" / "bleu.ipynb"
    nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    nb.cells[0].source += "\nedited by hand"
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "assignments/bleu.ipynb differs" in out and "edited by hand" in out

    assert main(["notebooks", "--root", str(tmp_path)]) == 0  # regenerating repairs it
    (tmp_path / "assignments" / "tests" / "extra.py").write_text("OK_FORMAT = False\nname = 'extra'\n")
    assert main(["notebooks", "--check", "--root", str(tmp_path)]) == 1
    assert "assignments/tests/extra.py is not generated" in capsys.readouterr().out


@pytest.mark.parametrize("part", MODULES)
def test_otter_test_file_has_one_case_per_public_check(part):
    """otter's own parser reads the generated file: the public checks, their points and descriptions."""
    path = ROOT / "assignments" / "tests" / f"{part}.py"
    parsed = ExceptionTestFile.from_file(str(path))
    public = [(name, e.points) for name, e in rubric.load()[part].items() if e.visibility == "public"]
    assert parsed.name == part
    assert [(c.name, c.points) for c in parsed.test_cases] == public
    described = {c.name: c.description for c in checks_of(part)}
    assert [c.failure_message for c in parsed.test_cases] == [described[name] for name, _ in public]
    assert not any(c.hidden for c in parsed.test_cases)


def test_source_errors_name_the_file_and_line():
    with pytest.raises(notebooks.SourceError, match=r"s\.py:2: a markdown line must start with '# '"):
        notebooks.parse_source("# %% [markdown]\nnot a comment\n", "s.py")
    with pytest.raises(notebooks.SourceError, match=r"s\.py:1: unknown cell marker"):
        notebooks.parse_source("# %% [raw]\n# x\n", "s.py")
    with pytest.raises(notebooks.SourceError, match=r"s\.py:1: text before the first cell marker"):
        notebooks.parse_source("x = 1\n# %%\ny = 2\n", "s.py")
    with pytest.raises(notebooks.SourceError, match=r"s\.py: expected exactly one '# %% setup' cell, found 0"):
        notebooks.build_notebook("bleu", "assignments", '# %%\ngrader.check("bleu")\n', "s.py")
    with pytest.raises(notebooks.SourceError, match=r's\.py: no code cell calls grader\.check\("bleu"\)'):
        notebooks.build_notebook("bleu", "assignments", "# %% setup\n# %%\nx = 1\n", "s.py")
    with pytest.raises(
        notebooks.SourceError, match=r"s\.py: no code cell calls plt\.show\(\): the notebook has no figure"
    ):
        notebooks.build_notebook("bleu", "assignments", '# %% setup\n# %%\ngrader.check("bleu")\n', "s.py")
    with pytest.raises(ValueError, match="variant: expected one of"):
        notebooks.build_notebook("bleu", "students", "# %% setup\n", "s.py")


# ----------------------------------------------------------------------------------------- helpers


def test_setup_and_public_checks_name_a_bad_part():
    with pytest.raises(ValueError, match=r"^part: expected one of show_and_tell, .*got 'blue'"):
        setup("blue")
    with pytest.raises(ValueError, match=r"^part: expected one of show_and_tell, .*got 'blue'"):
        start("blue")
    with pytest.raises(ValueError, match=r"^also: expected part modules \(show_and_tell, .*got 'blue'"):
        start("bleu", "blue")
    with pytest.raises(ValueError, match=r"^part: expected one of show_and_tell, .*got 'blue'"):
        PublicChecks("blue")


def test_todo_line_only_for_the_stubs_message():
    assert todo_line("Part 3 (bleu): ngram_counts is not implemented yet") == (
        "NotImplementedError: Part 3 (bleu): ngram_counts is not implemented yet. "
        "Write it in bleu.py, then run this cell again."
    )
    assert todo_line("Part 1 (show_and_tell): ShowTellRNN.forward is not implemented yet").endswith(
        "Write it in show_and_tell.py, then run this cell again."
    )
    assert todo_line("this backend has no such operation") is None


def test_public_checks_grade_the_folder_once_and_report_the_checks_message(tmp_path, monkeypatch):
    """A bleu.py that forgets to clip: the clipping check fails with the grader's own message, the n-gram
    check passes, and both answers come from one grade."""
    from autograder.public import checker

    source = (ROOT / "solutions" / "bleu.py").read_text()
    buggy = source.replace("matches = sum(min(count, max_in_a_ref[gram])", "matches = sum(count")
    assert buggy != source
    (tmp_path / "bleu.py").write_text(buggy)
    grades = []
    real_check = checker.check
    monkeypatch.setattr(checker, "check", lambda *a, **k: grades.append(a) or real_check(*a, **k))

    module = types.ModuleType("bleu")  # what the notebook imported; only its file matters
    module.__file__ = str(tmp_path / "bleu.py")

    checks = PublicChecks("bleu")
    checks.verify("ngram_counts_is_the_counter_of_ngrams", module)
    with pytest.raises(PublicCheckFailed, match=r"clipped_counts: matches 7, expected 2") as failed:
        checks.verify("clipped_counts_clip_at_the_most_in_one_reference", module)
    assert str(failed.value) == checks.results()["clipped_counts_clip_at_the_most_in_one_reference"].output.strip()
    with pytest.raises(PublicCheckFailed, match="no public check 'no_such_check' for bleu.py"):
        checks.verify("no_such_check", module)
    assert len(grades) == 1 and checks.folder == tmp_path


# ----------------------------------------------------------------------------------------- execution


@pytest.fixture(scope="session")
def session_dir(tmp_path_factory) -> Path:
    """A folder every xdist worker of this session shares (the data cache, the kernel spec)."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "captionkit-notebooks"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def kernel_env(session_dir) -> dict:
    """The kernel's environment, with the notebooks' data cache warmed once (under a lock) for the session."""
    env = notebook_env(session_dir)
    with open(session_dir / "cache.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        warm_data_cache(env, session_dir)
    return env


@pytest.fixture(scope="session")
def kernel_specs(session_dir) -> Path:
    """A kernel spec for this interpreter, so no other installed "python3" kernel is picked."""
    return kernel_spec(session_dir / "kernels", KERNEL)


@pytest.fixture(scope="session")
def kit_copy(tmp_path_factory) -> Path:
    """assignments/ and solutions/ copied, so that executing a notebook writes nothing into the repository."""
    copy = tmp_path_factory.mktemp("kit")
    for folder in ("assignments", "solutions"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__", ".*", "*.pyc"))
    return copy


def execute(path: Path, env: dict, specs: Path) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    run_notebook(nb, folder=path.parent, specs=specs, kernel_name=KERNEL, env=env, timeout=CELL_TIMEOUT)
    return nb, time.perf_counter() - started


def outputs(nb) -> list[tuple[int, nbformat.NotebookNode]]:
    return [(i, o) for i, cell in enumerate(nb.cells) if cell.cell_type == "code" for o in cell.outputs]


def text_of(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return output.get("data", {}).get("text/plain", "")


def pixels(png: bytes) -> np.ndarray:
    """The pixels of a PNG image."""
    import io

    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(png), format="png")


def test_each_student_notebook_shows_its_reference_figure_below_the_cell_that_draws_it():
    for part in MODULES:
        nb = nbformat.read(ROOT / "assignments" / f"{part}.ipynb", as_version=4)
        marked = [i for i, c in enumerate(nb.cells) if c.metadata.get("captionkit", {}).get("reference_figure")]
        assert len(marked) == 1 and "plt.show()" in nb.cells[marked[0]].source, part
        below = nb.cells[marked[0] + 1]
        assert below.cell_type == "markdown" and f"]({notebooks.figure_path(part)})" in below.source, part
        assert (ROOT / "assignments" / notebooks.figure_path(part)).is_file()
        assert not any(
            "](figures/" in c.source for c in nbformat.read(ROOT / "solutions" / f"{part}.ipynb", as_version=4).cells
        )


def check_cells(nb, part: str) -> list[int]:
    found = [
        i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and f'grader.check("{part}")' in cell.source
    ]
    assert found, f"no grader.check cell in {part}.ipynb"
    return found


@pytest.mark.parametrize("part", MODULES)
def test_reference_notebook_runs_clean_and_passes_its_checks(part, kit_copy, kernel_env, kernel_specs):
    nb, seconds = execute(kit_copy / "solutions" / f"{part}.ipynb", kernel_env, kernel_specs)
    print(f"solutions/{part}.ipynb ran in {seconds:.1f} s")
    errors = [f"cell {i}: {o.ename}: {o.evalue}" for i, o in outputs(nb) if o.output_type == "error"]
    assert not errors, "\n".join(errors)
    for i in check_cells(nb, part):
        shown = "".join(text_of(o) for o in nb.cells[i].outputs)
        assert f"{part} results: All test cases passed!" in shown, shown
    figures = [o for _, o in outputs(nb) if "image/png" in o.get("data", {})]
    assert figures, "the notebook drew no figure"
    # The student notebook's "what you should see" was drawn from the sources as they are now (its stamp; its pixels
    # depend on the machine that trained the demo, instructor/notebooks.py), and it is small.
    drawn = notebooks.small_figure(notebooks.reference_figure(nb, part))
    assert len(drawn) <= notebooks.MAX_FIGURE_BYTES, f"{part}: the reference figure has {len(drawn)} bytes"
    committed = (ROOT / "assignments" / notebooks.figure_path(part)).read_bytes()
    assert notebooks.stamp_of(committed) == notebooks.sources_digest(part), (
        f"assignments/{notebooks.figure_path(part)} was drawn from other sources: run "
        f"`python -m instructor notebooks --figures --part {part}`"
    )


@pytest.mark.parametrize("part", MODULES)
def test_stub_notebook_stops_cleanly_at_its_todos(part, kit_copy, kernel_env, kernel_specs):
    nb, seconds = execute(kit_copy / "assignments" / f"{part}.ipynb", kernel_env, kernel_specs)
    print(f"assignments/{part}.ipynb ran in {seconds:.1f} s")
    number = BY_MODULE[part].number
    errors = [(i, o) for i, o in outputs(nb) if o.output_type == "error"]
    assert errors, "the stub notebook reached no TODO"

    # Every error is one line: an unfinished TODO, or a name a stopped cell never defined.
    for i, error in errors:
        assert len(error.traceback) == 1, f"cell {i} shows a traceback:\n" + "\n".join(error.traceback)[:3000]
        assert error.ename in ("NotImplementedError", "NameError"), f"cell {i}: {error.ename}: {error.evalue}"
    first_cell, first = errors[0]
    assert first.ename == "NotImplementedError"
    assert re.fullmatch(
        rf"NotImplementedError: Part {number} \({part}\): [\w.]+ is not implemented yet\. "
        rf"Write it in {part}\.py, then run this cell again\.",
        first.traceback[0],
    ), first.traceback

    # The checks run before the first TODO and show the kit's lines: no public point, one line per unwritten TODO
    # naming the checks that wait for it (every public check waits for one), what the public checks cover, and
    # none of otter's wrapper lines.
    checks = check_cells(nb, part)
    assert checks[0] < first_cell
    entries = rubric.load()[part]
    public = {e.number for e in entries.values() if e.visibility == "public"}
    full, out_of = (
        sum(e.points for e in entries.values()),
        sum(e.points for e in entries.values() if e.visibility == "public"),
    )
    for i in checks:
        assert not any(o.output_type == "error" for o in nb.cells[i].outputs), f"grader.check cell {i} raised"
        shown = "".join(text_of(o) for o in nb.cells[i].outputs)
        lines = shown.strip().splitlines()
        assert lines[0] == f"{part} results: 0 of {out_of:g} points from the public checks", shown[:2000]
        todos = [
            re.fullmatch(rf"    TODO [\w.]+ \({part}\.py:\d+\): \d+ checks? waits? for it \(([\d., ]+):.*", line)
            for line in lines[2:-2]
        ]
        assert all(todos), shown[:2000]
        waiting = {int(n.split(".")[1]) for t in todos for n in t.group(1).split(", ")}
        assert waiting == public, shown[:2000]
        assert lines[-1] == (
            f"public checks: {out_of:g} of the grade's {full:g} points; {full - out_of:g} more from "
            "hidden and training checks after the deadline"
        ), shown[:2000]
        assert "Error at line" not in shown and "Test case failed" not in shown, shown[:2000]


def test_setup_cell_reloads_the_module_and_only_shortens_todos(tmp_path, kernel_env, kernel_specs):
    """The generated setup cell, then: a TODO (one line), a name it left undefined (one line), the module
    written while the kernel runs (picked up without a restart), and an unrelated error (full traceback)."""
    shutil.copy(ROOT / "assignments" / "bleu.py", tmp_path / "bleu.py")
    setup_cell = nbformat.read(ROOT / "assignments" / "bleu.ipynb", as_version=4).cells[2]
    assert setup_cell.source == 'from shared.notebook import start; grader = start("bleu")'  # one line
    solution = (ROOT / "solutions" / "bleu.py").read_text()
    nb = nbformat.v4.new_notebook(
        cells=[setup_cell]
        + [
            nbformat.v4.new_code_cell(code)
            for code in (
                "counts = bleu.ngram_counts(['a', 'red', 'a', 'red'], 2)",
                "print(counts)",
                f"from pathlib import Path\nPath('bleu.py').write_text({solution!r})",
                "counts = bleu.ngram_counts(['a', 'red', 'a', 'red'], 2)\nprint(counts[('a', 'red')])",
                "1 / 0",
            )
        ]
    )
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    nb, _ = execute(path, kernel_env, kernel_specs)
    errors = [[o for o in cell.outputs if o.output_type == "error"] for cell in nb.cells]
    assert not errors[0] and not errors[3] and not errors[4], errors
    assert [o.traceback for o in errors[1]] == [
        [
            "NotImplementedError: Part 3 (bleu): ngram_counts is not "
            "implemented yet. Write it in bleu.py, then run this cell again."
        ]
    ]
    assert [o.traceback for o in errors[2]] == [
        [
            "NameError: name 'counts' is not defined: an earlier cell stopped "
            "at a TODO (Part 3 (bleu): ngram_counts is not implemented yet)."
        ]
    ]
    assert "".join(o.text for o in nb.cells[4].outputs if o.output_type == "stream").strip() == "2"
    assert errors[5][0].ename == "ZeroDivisionError" and len(errors[5][0].traceback) > 1
