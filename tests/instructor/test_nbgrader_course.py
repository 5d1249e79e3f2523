"""The nbgrader course end to end, with real nbgrader driven through its Python API.

`python -m instructor nbgrader-course` writes the course; generate_assignment and release_assignment hand it out
(session fixture `released`). A student fetches it with nbgrader and runs its notebook on a kernel that cannot import
the kit: the folder's own public checker grades the stubs and the reference modules. Three students submit the
fetched folder: "reference" (the modules of solutions/ for REFERENCE_PARTS, one trained part among them, and no
module for the other parts), "stubs" (as fetched) and "tamper" (no modules; a deleted, an edited and an added cell,
and a fake `autograder.grader` package of its own). Each is autograded once (session fixture `course`; the
reference's trained part trains), then feedback and the CSV export are generated. What is proven here is the
course's plumbing (grade cells, their points, stderr, the gradebook): the reference's full marks on every part
are tests/grader/test_grader.py's. Every autograde kernel has a library warning on stderr in every cell.
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from autograder.grader import rubric
from autograder.grader.training import SPECS
from autograder.public.limits import LIMITS
from instructor import golden as golden_command
from instructor import handout, nbgrader_course, questions
from instructor.__main__ import main
from shared.parts import MODULES
from tests.handout_env import CHECK_TIMEOUT, run_in, student_env
from tests.kernels import kernel_spec, run_notebook

pytestmark = pytest.mark.xdist_group("nbgrader")  # one worker builds the course and its grades

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "captioning"
HIDDEN_SEED = str(json.loads((ROOT / "autograder" / "grader" / "hidden" / "seed.json").read_text())["seed"])
# The parts the reference student sends the reference's modules of: a trained part and two that train nothing.
REFERENCE_PARTS = ("show_and_tell", "decoding", "bleu")
NOISE = "UserWarning: TypedStorage is deprecated (a library warning on stderr, from the test)"

# In every kernel of the test, before every cell: a Python warning and a C-level write on stderr, as torch
# prints them; and a line in a log, to show it happened.
STARTUP = f"""
import os, warnings
warnings.simplefilter("always", UserWarning)
def _library_noise(*args):
    with open(os.environ["CAPTIONKIT_TEST_NOISE_LOG"], "a") as log:
        log.write(os.getcwd() + "\\n")
    warnings.warn({NOISE.split(": ", 1)[1]!r}, UserWarning)
    os.write(2, b"[W NNPACK.cpp:64] Could not initialize NNPACK! Reason: Unsupported hardware.\\n")
get_ipython().events.register("pre_run_cell", _library_noise)
"""
# The tamper student's own `autograder.grader.notebook`, beside the released checker's `autograder/__init__.py`: the
# grade cells must not import it.
FAKE_KIT = "def grade_part(part, folder='.', points=0):\n    print('FAKE KIT')\n    return float(points)\n"
ADDED_CELL = (
    "import autograder.grader.notebook as kit\nkit.grade_part = lambda part, folder='.', points=0: float(points)"
)


def solution_lines() -> list[str]:
    """Code lines of the solution regions that appear nowhere in the stubs: what must never reach a student. Less
    the lines that the handout, and so the released checker, holds on purpose (tests/instructor/test_handout.py REVIEWED)."""
    from tests.instructor.test_handout import REVIEWED

    stubs = "".join(p.read_text() for p in (ROOT / "assignments").glob("*.py"))
    found = []
    for module in MODULES:
        inside = False
        for line in (ROOT / "solutions" / f"{module}.py").read_text().splitlines():
            text = line.strip()
            if "BEGIN SOLUTION" in text or "END SOLUTION" in text:
                inside = "BEGIN" in text
                continue
            if inside and len(text) >= 30 and not text.startswith("#") and text not in stubs and text not in REVIEWED:
                found.append(text)
    return found


def visible_text(path: Path) -> str:
    """A file's text as a reader sees it (HTML without tags and entities: code is split into spans)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return html.unescape(re.sub(r"<[^>]+>", "", text)) if path.suffix == ".html" else text


def grade_cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}


def nbgrader_step(api, step: str, *args) -> None:
    """`nbgrader STEP ASSIGNMENT ARGS` through the API, timed; fails the test with nbgrader's log."""
    t0 = time.monotonic()
    result = getattr(api, step)(ASSIGNMENT, *args)
    print(f"nbgrader {step} {' '.join(args)}: {time.monotonic() - t0:.1f} s", flush=True)
    assert result["success"], f"{step} {args}: {result.get('error', '')}\n{result.get('log', '')}"


def kit_environment(mp: pytest.MonkeyPatch) -> None:
    """The environment nbgrader runs in on the instructor's machine, as the tests set it."""
    # nbgrader runs the `alembic` command when it creates the gradebook: the environment's bin/ on PATH,
    # as when nbgrader runs from an activated environment.
    mp.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
    # The hidden data set's cache the rest of the tests use (built once per machine).
    mp.setenv("CAPTIONKIT_CACHE", os.environ.get("CAPTIONKIT_CACHE", str(ROOT / ".cache" / "captionkit")))


@pytest.fixture(scope="session")
def released(tmp_path_factory):
    """The course as the instructor hands it out: written by the kit, then generate_assignment (source/ -> release/)
    and release_assignment (release/ -> the exchange, a folder of the test)."""
    from nbgrader.apps import NbGraderAPI

    base = tmp_path_factory.mktemp("nbgrader")
    with pytest.MonkeyPatch.context() as mp:
        kit_environment(mp)
        path = nbgrader_course.write_course(base / "course", ASSIGNMENT)
        config = PyFileConfigLoader("nbgrader_config.py", path=str(path)).load_config()
        config.Exchange.root = str(base / "exchange")  # nothing outside the test's folder ...
        (base / "exchange").mkdir(mode=0o777)  # ... made as nbgrader wants it: anyone may write there
        (base / "exchange").chmod(0o777)
        api = NbGraderAPI(config=config)
        nbgrader_step(api, "generate_assignment")
        nbgrader_step(api, "release_assignment")
    return dict(base=base, path=path, config=config, exchange=base / "exchange", release=path / "release" / ASSIGNMENT)


@pytest.fixture(scope="session")
def course(released):
    """The course after three autogrades of the fetched folder, generate_feedback and export."""
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from nbgrader.plugins import CsvExportPlugin

    base, path, release = released["base"], released["path"], released["release"]
    ipython_dir = base / "ipython"
    (ipython_dir / "profile_default" / "startup").mkdir(parents=True)
    (ipython_dir / "profile_default" / "startup" / "00-library-noise.py").write_text(STARTUP)
    with pytest.MonkeyPatch.context() as mp:
        kit_environment(mp)
        mp.setenv("IPYTHONDIR", str(ipython_dir))
        mp.setenv("CAPTIONKIT_TEST_NOISE_LOG", str(base / "noise.log"))
        api = NbGraderAPI(config=released["config"])
        released_nb = nbformat.read(str(release / f"{ASSIGNMENT}.ipynb"), as_version=4)

        def submit(student: str, modules: Path | None, nb, parts=MODULES) -> Path:
            """The released folder as a student submits it (its public checker included), with `modules`' modules
            of `parts` in place of the stubs and no module for the other parts."""
            folder = path / "submitted" / student / ASSIGNMENT
            shutil.copytree(release, folder)
            for module in MODULES:
                (folder / f"{module}.py").unlink()
            for module in parts if modules else ():
                shutil.copy(modules / f"{module}.py", folder / f"{module}.py")
            nbformat.write(nb, str(folder / f"{ASSIGNMENT}.ipynb"))
            return folder

        submit("reference", ROOT / "solutions", released_nb, REFERENCE_PARTS)
        submit("stubs", release, released_nb)
        tampered = nbformat.from_dict(json.loads(json.dumps(released_nb)))
        tampered.cells = [c for c in tampered.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "decoding"]
        grade_cells(tampered)["bleu"].source = "15.0  # full marks, please"
        tampered.cells.insert(1, nbformat.v4.new_code_cell(ADDED_CELL))
        folder = submit("tamper", None, tampered)
        (folder / "autograder" / "grader").mkdir()
        (folder / "autograder" / "grader" / "__init__.py").write_text("")
        (folder / "autograder" / "grader" / "notebook.py").write_text(FAKE_KIT)

        for student in ("reference", "stubs", "tamper"):
            nbgrader_step(api, "autograde", student)
        nbgrader_step(api, "generate_feedback")
        plugin = CsvExportPlugin(to=str(base / "grades.csv"), parent=api)
        with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
            plugin.export(gb)
            grades = {
                student: {
                    g.name: (g.score, g.max_score, g.needs_manual_grade)
                    for nb in gb.find_submission(ASSIGNMENT, student).notebooks
                    if nb.name == ASSIGNMENT
                    for g in nb.grades
                }  # the written questions' notebook: tests/instructor/test_questions.py
                for student in ("reference", "stubs", "tamper")
            }
        with open(base / "grades.csv", newline="") as f:
            rows = {row["student_id"]: row for row in csv.DictReader(f)}
        noise = (base / "noise.log").read_text().splitlines() if (base / "noise.log").exists() else []
        yield dict(path=path, config=released["config"], grades=grades, rows=rows, noise=noise, released=released_nb)


@pytest.fixture(autouse=True)
def _cache_env(monkeypatch):
    """Loading a course's config sets $CAPTIONKIT_CACHE when unset: undo it after each test."""
    monkeypatch.setenv("CAPTIONKIT_CACHE", os.environ.get("CAPTIONKIT_CACHE", str(ROOT / ".cache" / "captionkit")))


def autograded(course, student: str):
    return nbformat.read(
        str(course["path"] / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4
    )


# The course as written


def test_source_holds_the_stubs_and_one_locked_grade_cell_per_part(tmp_path):
    path = nbgrader_course.write_course(tmp_path / "course")
    source = path / "source" / "captioning"
    assert sorted(p.name for p in source.iterdir()) == sorted(
        [f"{m}.py" for m in MODULES] + ["captioning.ipynb", "written.ipynb", "figures", "autograder", "shared"]
    )
    for module in MODULES:
        assert (source / f"{module}.py").read_text() == (ROOT / "assignments" / f"{module}.py").read_text()
        assert (source / "figures" / f"{module}.png").read_bytes() == (
            ROOT / "assignments" / "figures" / f"{module}.png"
        ).read_bytes()
    nb = nbformat.read(str(source / "captioning.ipynb"), as_version=4)
    assert all(f"](figures/{m}.png)" in nb.cells[0].source for m in MODULES)  # the intro shows every part's figure
    points = nbgrader_course.part_points()
    cells = grade_cells(nb)
    assert list(cells) == list(MODULES)
    for part, cell in cells.items():
        meta = cell.metadata["nbgrader"]
        assert meta == {
            "grade": True,
            "solution": False,
            "locked": True,
            "task": False,
            "points": points[part],
            "grade_id": part,
            "schema_version": 3,
        }
        assert f'grade_part("{part}", points={points[part]:g})' in cell.source
    # The other cells carry no nbgrader metadata (add_missing_cells needs the grade cells' neighbours to be
    # grade cells, nbgrader 0.9.6 OverwriteCells.add_missing_grade_cells).
    assert all("nbgrader" not in c.metadata for c in nb.cells if c not in cells.values())


def test_config_traits(tmp_path):
    path = nbgrader_course.write_course(tmp_path / "course", "ps1")
    (path / "source" / "other").mkdir()  # another assignment of the course, not the kit's
    config = PyFileConfigLoader("nbgrader_config.py", path=str(path)).load_config()
    assert config.CourseDirectory.root == str(path)
    assert config.CourseDirectory.db_url == f"sqlite:///{path / 'gradebook.db'}"
    assert config.Autograde.exclude_overwriting == {"ps1": [f"{m}.py" for m in MODULES], "other": []}
    assert config.OverwriteCells.add_missing_cells is True
    assert config.Execute.interrupt_on_timeout is True
    assert SPECS, "no trained part is registered"
    for part in MODULES:
        limit = config.Execute.timeout_func({"metadata": {"nbgrader": {"grade_id": part}}})
        assert limit > LIMITS.part
        if part in SPECS:
            assert limit >= 2 * LIMITS.part
    assert config.IgnorePattern.enabled is True


def test_cli_writes_the_course_and_never_replaces_a_foreign_config(tmp_path, capsys):
    assert main(["nbgrader-course", "--out", str(tmp_path / "c"), "--assignment", "hw2"]) == 0
    assert (tmp_path / "c" / "source" / "hw2" / "hw2.ipynb").is_file()
    assert "nbgrader generate_assignment hw2" in capsys.readouterr().out
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(FileExistsError):
        nbgrader_course.write_course(tmp_path / "d")
    assert not (tmp_path / "d" / "source").exists()


def test_a_bad_golden_file_stops_the_command_with_one_line(tmp_path, monkeypatch, capsys):
    """The assignment carries the handout's checker, checked as the handout build checks it."""
    from autograder.public import golden

    for part in golden_command.PARTS:
        shutil.copy(golden.path_of(part), tmp_path / f"{part}.pt")
    (tmp_path / "attention.pt").unlink()
    monkeypatch.setattr(golden, "HERE", tmp_path)
    assert main(["nbgrader-course", "--out", str(tmp_path / "c")]) == 1
    out = capsys.readouterr().out
    assert re.fullmatch(
        r"nbgrader-course: autograder/public/golden/attention\.pt is missing: .*"
        r"`python -m instructor golden`\n",
        out,
    ), out
    assert not (tmp_path / "c").exists()


def test_stderr_zeroes_a_grade_cell_unless_the_course_ignores_it(tmp_path):
    """nbgrader 0.9.6 gives 0 to a grade cell with any stderr output; the course's IgnorePattern drops it."""
    from nbgrader.preprocessors import IgnorePattern
    from nbgrader.utils import determine_grade

    cell = nbformat.v4.new_code_cell("grade_part('bleu', points=15)")
    cell.metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "locked": True,
        "points": 15,
        "grade_id": "bleu",
        "schema_version": 3,
    }
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stderr", text=NOISE + "\n"),
        nbformat.v4.new_output("stream", name="stderr", text=""),
        nbformat.v4.new_output("stream", name="stdout", text="Part 3 (bleu): 12 / 15 points\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "12.0"}, execution_count=1),
    ]
    assert determine_grade(cell)[0] == 0
    config = PyFileConfigLoader(
        "nbgrader_config.py", path=str(nbgrader_course.write_course(tmp_path / "c"))
    ).load_config()
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb, _ = IgnorePattern(config=config).preprocess(nb, {})
    assert determine_grade(nb.cells[0]) == (12.0, 15.0)


FAKE_ENGINE = """
import sys, warnings
from autograder.grader import engine, notebook

def fake_grade(folder, options=engine.GradeOptions()):
    warnings.warn("a library warning", UserWarning)
    print("C++ noise", file=sys.stderr)
    part = options.parts[0]
    make = lambda name, score, vis, out: engine.CheckResult(part, name, "3.1", "d", score, 2.0, vis, out, 0.1)
    return engine.GradeReport([make("public_one", 2.0, "public", "passed"),
                               make("hidden_one", 0.0, "hidden", "failed: the property"),
                               make("hidden_two", 0.0, "hidden", "failed: the property")])

engine.grade = fake_grade
print("RESULT", notebook.grade_part("bleu", sys.argv[1]), notebook.grade_part("bleu", sys.argv[1], points=3))
print("CACHE", __import__("os").environ["CAPTIONKIT_CACHE"])
"""


def test_grade_part_prints_on_stdout_and_returns_the_points(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CAPTIONKIT_CACHE"}
    env["HOME"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-W", "always", "-c", FAKE_ENGINE, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # nothing a grade cell would be zeroed for
    out = result.stdout
    assert "a library warning" in out and "C++ noise" in out
    assert "FAIL" in out and "failed: the property" in out and "(the same)" in out
    assert "Part 3 (bleu): 2 / 6 points" in out
    assert "RESULT 2.0 1.0" in out  # rubric 6, a cell of 3: scaled
    assert f"CACHE {tmp_path / '.cache' / 'captionkit'}" in out  # never the graded folder


# nbgrader end to end (one autograde per student, shared by the tests below)


def files_of(folder: Path) -> dict[str, bytes]:
    """{path inside `folder` (POSIX): content} of every file under `folder`."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_release_is_locked_and_holds_only_stubs_and_the_handouts_public_checker(released, built):
    """The release: the stubs, the notebook, the written questions' notebook, the figures, and the public checker
    exactly as the handout holds it (autograder/: the same files; shared/: those the checker and the stubs import, a
    part of the handout's)."""
    release = released["release"]
    assert sorted(p.name for p in release.iterdir()) == sorted(
        [f"{m}.py" for m in MODULES]
        + [f"{ASSIGNMENT}.ipynb", nbgrader_course.WRITTEN, "figures", "autograder", "shared"]
    )
    assert sorted(p.name for p in (release / "figures").iterdir()) == sorted(f"{m}.png" for m in MODULES)
    for module in MODULES:
        assert (release / f"{module}.py").read_text() == (ROOT / "assignments" / f"{module}.py").read_text()
    checker, handed_out = files_of(release), files_of(built[0])
    checker = {name: data for name, data in checker.items() if name.startswith(("autograder/", "shared/"))}
    assert {name for name in checker if name.startswith("autograder/")} == {
        name for name in handed_out if name.startswith("autograder/")
    }
    stubs_import = set().union(*(handout.shared_imports((release / f"{m}.py").read_text()) for m in MODULES))
    assert {"shared/__init__.py", *(f"shared/{m}.py" for m in stubs_import)} <= set(checker)
    assert {name: handed_out.get(name) for name in checker} == checker
    cells = grade_cells(nbformat.read(str(release / f"{ASSIGNMENT}.ipynb"), as_version=4))
    assert list(cells) == list(MODULES)
    for cell in cells.values():
        assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False
        assert cell.metadata["nbgrader"]["locked"] is True


def test_the_release_holds_no_answer(released):
    """The handout's leak scans (tests/instructor/test_handout.py) on every file of the release: no line from inside a solution
    region, no line of a hidden check, no hidden seed or secret in any encoding, no hidden split's captions or tensors;
    the only binary files are the golden data and the figures, both as the handout holds them."""
    from tests.instructor.test_handout import (
        hidden_data_leaks,
        hidden_fingerprints,
        leaks,
        secret_check_lines,
        secret_solution_lines,
    )

    files = files_of(released["release"])
    assert leaks(files, secret_solution_lines()) == []
    assert leaks(files, secret_check_lines()) == []
    assert hidden_data_leaks(files, hidden_fingerprints()) == []
    binary = {name for name in files if name.endswith((".pt", ".png"))}
    assert binary == {
        *(f"autograder/public/golden/{part}.pt" for part in golden_command.PARTS),
        *(f"figures/{part}.png" for part in MODULES),
    }
    for name, data in files.items():
        if name not in binary:
            data.decode("utf-8")  # every other file is text
        assert not name.endswith((".pyc", ".pyo")) and "__pycache__" not in name, name


# What a grade cell imports, as a kernel started in the assignment's folder does (its folder first on sys.path):
# the cell up to its grade_part call, then where grade_part and `autograder` came from.
WHICH_GRADER = "\nimport autograder\nprint(grade_part.__module__, autograder.__file__)"


def test_a_grade_cell_takes_the_kits_grader_where_installed_and_the_folders_checker_elsewhere(tmp_path, student_python):
    """In the assignment's folder as released (source/ is copied verbatim): without the kit, the cell imports the
    folder's public checker; with the kit, the kit's grader, even with an `autograder/grader/notebook.py` of the
    student's beside the released `autograder/__init__.py`."""
    folder = nbgrader_course.write_course(tmp_path / "course") / "source" / "captioning"
    cell = nbgrader_course.grade_cell_source("bleu", 15).rsplit("\n", 1)[0] + WHICH_GRADER
    done = run_in(folder, student_python, "-c", cell, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    module, where = done.stdout.split()
    assert module == "autograder.public.notebook" and Path(where).parent.parent == folder, done.stdout
    (folder / "autograder" / "grader").mkdir()
    (folder / "autograder" / "grader" / "__init__.py").write_text("")
    (folder / "autograder" / "grader" / "notebook.py").write_text(FAKE_KIT)
    done = run_in(folder, Path(sys.executable), "-c", cell, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    module, where = done.stdout.split()
    assert module == "autograder.grader.notebook" and Path(where).parent.parent == ROOT, done.stdout


def shown(cell) -> str:
    """What a code cell printed, returned or raised, as text."""
    return "".join(
        o.text
        if o.output_type == "stream"
        else "\n".join(o.traceback)
        if o.output_type == "error"
        else o.get("data", {}).get("text/plain", "")
        for o in cell.outputs
    )


def test_a_student_runs_the_fetched_assignment_without_the_kit(released, student_python, tmp_path):
    """A student on the course's JupyterHub: `nbgrader fetch_assignment` from the exchange, nothing else (no handout,
    no kit), and the fetched notebook run on a kernel that cannot import the kit. Each grade cell runs its part's public
    checks with the folder's own checker and ends in their points, nothing on stderr: on the stubs 0, with the one
    line per unwritten TODO; with the seven reference modules copied in, every public check passes."""
    from nbgrader.utils import determine_grade

    home = tmp_path / "home"
    home.mkdir()
    env = student_env() | {
        "HOME": str(home),
        "CAPTIONKIT_CACHE": str(tmp_path / "cache"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
    }
    fetch = subprocess.run(
        [
            str(student_python),
            "-m",
            "nbgrader",
            "fetch_assignment",
            ASSIGNMENT,
            f"--course={nbgrader_course.COURSE_ID}",
            f"--Exchange.root={released['exchange']}",
        ],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert fetch.returncode == 0, fetch.stdout[-3000:] + fetch.stderr[-3000:]
    folder = home / ASSIGNMENT
    assert files_of(folder) == files_of(released["release"])
    specs = kernel_spec(tmp_path / "kernels", "captionkit-student", python=student_python)
    entries = rubric.load()

    def run() -> dict[str, tuple[str, tuple]]:
        nb = nbformat.read(str(folder / f"{ASSIGNMENT}.ipynb"), as_version=4)
        nb = run_notebook(
            nb, folder=folder, specs=specs, kernel_name="captionkit-student", env=env, timeout=CHECK_TIMEOUT
        )
        found = {}
        for part, cell in grade_cells(nb).items():
            out = shown(cell)
            assert not [o for o in cell.outputs if o.output_type == "error" or o.get("name") == "stderr"], out[-3000:]
            assert "The public checks only" in out, out[-3000:]
            found[part] = (out, determine_grade(cell))
        return found

    for part, (out, grade) in run().items():
        assert grade == (0, sum(e.points for e in entries[part].values())), out[-3000:]
        assert re.search(rf"^    TODO [\w.]+ \({part}\.py:\d+\): \d+ checks? waits? for it", out, re.M), out[-3000:]
        assert "Traceback" not in out, out[-3000:]
    for module in MODULES:
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder / f"{module}.py")
    for part, (out, grade) in run().items():
        public = sum(e.points for e in entries[part].values() if e.visibility == "public")
        assert grade == (public, sum(e.points for e in entries[part].values())), out[-3000:]
        assert "FAIL" not in out and "TODO" not in out, out[-3000:]


def test_reference_gets_full_marks_and_stubs_zero(course):
    points = nbgrader_course.part_points()
    assert course["grades"]["reference"] == {
        p: (points[p] if p in REFERENCE_PARTS else 0.0, points[p], False) for p in MODULES
    }
    assert course["grades"]["stubs"] == {p: (0.0, points[p], False) for p in MODULES}
    rows = course["rows"]
    # The export's maximum counts the written questions too (graded by hand; unanswered here: 0).
    total = sum(points.values()) + sum(q.points for q in questions.all_questions())
    assert float(rows["reference"]["score"]) == sum(points[p] for p in REFERENCE_PARTS)
    assert float(rows["reference"]["max_score"]) == total
    cells = grade_cells(autograded(course, "reference"))
    for part, cell in cells.items():
        out = "".join(o.get("text", "") for o in cell.outputs)
        assert (f"{part}.py is missing from the submission" in out) == (part not in REFERENCE_PARTS), (part, out)
        assert "The public checks only" not in out, (part, out)  # the kit's grader, not the released checker ...
    graded = course["path"] / "autograded" / "reference" / ASSIGNMENT
    assert (graded / "autograder" / "public" / "notebook.py").is_file()  # ... that lay in the graded folder
    assert float(rows["stubs"]["score"]) == 0.0 and float(rows["stubs"]["max_score"]) == total
    out = "".join(o.get("text", "") for c in grade_cells(autograded(course, "stubs")).values() for o in c.outputs)
    assert "is not implemented yet" in out  # the student sees why


def test_a_library_warning_on_stderr_does_not_zero_a_correct_answer(course):
    # The noise ran before every grade cell of the reference, whose parts still have full marks (above) ...
    ran = [line for line in course["noise"] if f"{os.sep}reference{os.sep}" in line]
    assert len(ran) >= len(MODULES)
    # ... and no stderr output is left to score.
    for cell in grade_cells(autograded(course, "reference")).values():
        assert not [o for o in cell.outputs if o.output_type == "stream" and o.name == "stderr"]
        assert [o for o in cell.outputs if o.output_type == "execute_result"]


def test_tampering_with_the_notebook_earns_nothing(course):
    grades = course["grades"]["tamper"]
    assert {p: (score, manual) for p, (score, _, manual) in grades.items()} == {p: (0.0, False) for p in MODULES}
    assert float(course["rows"]["tamper"]["score"]) == 0.0
    nb = autograded(course, "tamper")
    cells = grade_cells(nb)
    released = grade_cells(course["released"])
    assert list(cells) == list(MODULES)  # the deleted cell is back ...
    assert "was missing from the submission" in cells["decoding"].source
    assert released["decoding"].source in cells["decoding"].source  # ... and ran: graded, not manual
    assert cells["bleu"].source == released["bleu"].source  # the edited locked cell is restored
    assert not any("kit.grade_part" in c.source for c in nb.cells)  # the added cell is gone
    assert all(c.cell_type != "code" or c.metadata.get("nbgrader", {}).get("grade") for c in nb.cells)
    outputs = "".join(o.get("text", "") for c in cells.values() for o in c.outputs)
    assert "FAKE KIT" not in outputs and "is missing from the submission" in outputs  # the course's grader ran


def test_nothing_hidden_reaches_a_student(course):
    path = course["path"]
    secrets = solution_lines()
    assert len(secrets) > 20
    shown = [p for p in (path / "release" / ASSIGNMENT).rglob("*") if p.is_file()]
    shown += [
        p for p in (path / "feedback").rglob("*") if p.is_file() and (p.suffix == ".html" or "reference" not in p.parts)
    ]  # the reference's own modules are its own
    assert any(p.suffix == ".html" for p in shown) and len(shown) > 8
    for p in shown:
        text = visible_text(p)
        leaked = [line for line in secrets if line in text]
        assert not leaked, f"{p.relative_to(path)} holds solution lines: {leaked[:3]}"
        assert not re.search(rf"\b{HIDDEN_SEED}\b", text), f"{p.relative_to(path)} holds the hidden seed"
        for marker in ("BEGIN HIDDEN", "BEGIN SOLUTION"):
            assert marker not in text, f"{p.relative_to(path)} holds {marker!r}"
        # A graded notebook names no file of the hidden checks (the public checks' docstrings say where they are).
        assert p.suffix != ".html" or "autograder/grader/checks" not in text, p.relative_to(path)
    # No cache of the hidden data and no file the student did not send reaches the graded folder or feedback; the
    # only data files there are the release's golden data (the released checker, put back by autograde).
    golden = files_of(path / "release" / ASSIGNMENT / "autograder" / "public" / "golden")
    for step in ("autograded", "feedback"):
        assert not list((path / step).rglob(".cache")), step
        for data in (path / step).rglob("*.pt"):
            assert data.parent.name == "golden" and golden.get(data.name) == data.read_bytes(), data
    for student in ("reference", "stubs"):
        feedback = path / "feedback" / student / ASSIGNMENT
        assert (feedback / f"{ASSIGNMENT}.html").is_file()
        assert "Score" in visible_text(feedback / f"{ASSIGNMENT}.html")
