"""Write an nbgrader course directory for the assignment: `python -m instructor nbgrader-course --out DIR`.

    DIR/nbgrader_config.py                  course id, gradebook, what autograde may overwrite, timeouts
    DIR/source/<assignment>/<part>.py       the seven student stubs, copied from assignments/
    DIR/source/<assignment>/<assignment>.ipynb   one locked grade cell per part
    DIR/source/<assignment>/written.ipynb   the written questions: per question a locked prompt and a manually
                                            graded answer cell with its points (instructor/rubrics/, never the rubric)
    DIR/source/<assignment>/figures/<part>.png   each part's reference figure, shown in the notebook's introduction
    DIR/source/<assignment>/autograder/, shared/   the handout's public checker (instructor.handout.checker_files)

Students answer in the seven modules, not in the notebook: each grade cell calls the kit's grader
(`autograder.grader.notebook.grade_part`) on the student's module next to it and shows the points earned,
which nbgrader takes as the cell's partial credit. Where the kit is not installed (a student's environment), the
same cell runs the part's public checks with the checker released in the assignment's folder. nbgrader copies
every file of source/ verbatim into the release, so only the generated stubs and the handout's public checker go
there, never solutions/ or the grader. How to run the course: docs/nbgrader.md.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import nbformat
from nbgrader import utils as nbgrader_utils
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.grader import rubric as rubric_mod
from autograder.grader import templates
from instructor import handout, questions
from instructor.notebooks import FIGURES, figure_path
from instructor.stubs import committed_stubs
from shared.parts import BY_MODULE, MODULES, PARTS

ROOT = Path(__file__).resolve().parent.parent
COURSE_ID = "captionkit"
WRITTEN = "written.ipynb"  # the written questions: manually graded answer cells (instructor/questions.py)
# The first line of the generated config: write_course only ever replaces a config that has it.
CONFIG_HEADER = templates.text("nbgrader_config.py.in").splitlines()[0]
# Any stderr output of a cell is removed before scoring (IgnorePattern): a grade cell's score is the
# number it shows, and nbgrader would give 0 to a cell with a library warning on stderr.
IGNORE_STDERR = r"(?s).*"


class DropUngradedCode(NbGraderPreprocessor):
    """Autograde's sanitizing step, after OverwriteCells: remove every code cell that is not one of the
    assignment's grade cells. The notebook holds no answers (those are the modules), so a cell a student
    added can only tamper with the kernel the grade cells run in (e.g. replace grade_part)."""

    def preprocess(self, nb, resources):
        def graded(cell) -> bool:
            # After OverwriteCells a grade_id left on a cell is one of the gradebook's (an unknown one is
            # deleted) and the cell's source is the instructor's.
            # (A cell put back by add_missing_cells has plain dicts inside: item access only.)
            return nbgrader_utils.is_grade(cell) and bool(cell["metadata"]["nbgrader"].get("grade_id"))

        kept = [cell for cell in nb.cells if cell.cell_type != "code" or graded(cell)]
        if len(kept) < len(nb.cells):
            self.log.warning("Removed %d code cell(s) that are not grade cells", len(nb.cells) - len(kept))
        nb.cells = kept
        return nb, resources


def cell_timeouts() -> dict[str, int]:
    """Seconds nbgrader waits for the grade cell of each part. The engine stops a part after its time
    limit (autograder.public.limits) and still reports every check; the cell's limit is only the backstop above
    it (a cell that runs out scores 0 with no per-check message), twice the engine's on the training
    parts for a slow or loaded grading machine."""
    from autograder.grader.training import SPECS  # the parts whose checks train the student's model (imports torch)
    from autograder.public.limits import LIMITS

    return {part: int(2 * LIMITS.part if part in SPECS else LIMITS.part + 60) for part in MODULES}


def part_points() -> dict[str, float]:
    """The total points of each part in autograder/grader/rubric.json."""
    rubric = rubric_mod.load()
    return {part: sum(entry.points for entry in rubric[part].values()) for part in MODULES}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


# The modules whose absence means "the course's grader is not installed here" (a grade cell then runs the public
# checks); any other missing module is an error of the environment, shown as such.
KIT_MODULES = ("autograder", "autograder.grader", "autograder.grader.notebook")


def grade_cell_source(part: str, points: float) -> str:
    """The code of the grade cell of `part`: the full grade where the kit is installed (autograde on the instructor's
    machine, with the kit's grader and never a module of the submission's folder, which holds a copy of the public
    checker), the public checks of the checker in the notebook's folder elsewhere (autograder.public.notebook); a
    number either way."""
    p = BY_MODULE[part]
    return "\n".join(
        [
            f"# Part {p.number}: {p.title} ({_number(points)} points). Grades {part}.py in this folder.",
            "# Locked: nbgrader restores this cell before grading, and removes code cells added to the notebook.",
            "# Where the course's grader is installed (autograde): every check. Elsewhere (a student's environment):",
            "# the public checks only, by the checker in this folder, which is never used where the grader is installed.",
            "import os, sys",
            'here = [p for p in sys.path if os.path.abspath(p or ".") == os.getcwd()]',
            "sys.path[:] = [p for p in sys.path if p not in here]",
            "try:",
            "    from autograder.grader.notebook import grade_part",
            "except ModuleNotFoundError as exc:",
            f"    if exc.name not in {KIT_MODULES!r}:",
            "        raise",
            '    sys.path[:0] = here or [""]',
            "    from autograder.public.notebook import grade_part",
            f'grade_part("{part}", points={_number(points)})',
        ]
    )


INTRO = """\
# Image captioning: grading notebook

Your answers are the seven modules in this folder ({modules}): fill in every TODO as its docstring
says. You do not need to change this notebook; submit it together with the modules.

Each cell below checks one part. In your environment it runs the part's public checks, with the checker
in this folder (`autograder/`, `shared/`: do not edit them, grading uses the course's own copy), as
`python -m autograder.public check --part <part>` does in a terminal here, and shows their points. When the
course grades your submission, the same cell runs every check, hidden ones included (a hidden check shows
only the property it tests), and the training parts train your models on hidden scenes.

The grade cells are locked. Before grading they are restored from the instructor's copy, a deleted one
is put back, and code cells added to this notebook are removed.

What each part's notebook (in the course's handout) draws in its last figure with a working module, drawn by
the reference solution on public scenes:

{figures}
"""


def build_notebook(points: dict[str, float] | None = None) -> nbformat.NotebookNode:
    """The assignment notebook: an introduction and one locked grade cell per part."""
    points = part_points() if points is None else points
    modules = ", ".join(f"`{m}.py`" for m in MODULES)
    figures = "\n\n".join(
        f"Part {p.number}, {p.title} (`{p.module}.py`):\n\n![What Part {p.number}'s notebook draws with "
        f"the reference]({figure_path(p.module)})"
        for p in PARTS
    )
    intro = nbformat.v4.new_markdown_cell(INTRO.format(modules=modules, figures=figures), id="intro")
    cells = [intro]
    for p in PARTS:
        cell = nbformat.v4.new_code_cell(grade_cell_source(p.module, points[p.module]), id=f"grade-{p.module}")
        cell.metadata["nbgrader"] = {
            "grade": True,
            "solution": False,
            "locked": True,
            "task": False,
            "points": _number(points[p.module]),
            "grade_id": p.module,
            "schema_version": 3,
        }
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def config_text() -> str:
    """The text of nbgrader_config.py (the same for every assignment of the course), from its template
    autograder/grader/templates/nbgrader_config.py.in."""
    modules = ",\n               ".join(", ".join(f'"{m}.py"' for m in MODULES[i : i + 4]) for i in (0, 4))
    limits = cell_timeouts()
    timeouts = ", ".join(f'"{part}": {seconds}' for part, seconds in limits.items())
    return templates.render(
        "nbgrader_config.py.in",
        COURSE_ID=COURSE_ID,
        MODULES=modules,
        TIMEOUTS=timeouts,
        MAX_TIMEOUT=max(limits.values()),
        IGNORE_STDERR=IGNORE_STDERR,
    )


def write_course(out: Path, assignment: str = "captioning") -> Path:
    """Write (or refresh) the course directory `out` with the assignment's source folder; return `out`.

    Only nbgrader_config.py and source/<assignment>/ are written; a config not written by the kit is
    never replaced, and the rest of the course (gradebook, release, submissions) is left alone."""
    out = Path(out).resolve()
    if not assignment or not all(ch.isalnum() or ch in "-_" for ch in assignment):
        raise ValueError(f"assignment name {assignment!r}: use letters, digits, '-' and '_'")
    config = out / "nbgrader_config.py"
    if config.exists() and CONFIG_HEADER not in config.read_text(encoding="utf-8"):
        raise FileExistsError(f"{config} was not written by the kit; move it away first")
    stubs = committed_stubs(ROOT)
    checker = handout.checker_files({f"{module}.py": text.encode() for module, text in stubs.items()})
    notebook = build_notebook()
    source = out / "source" / assignment
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    for module, text in stubs.items():
        (source / f"{module}.py").write_text(text, encoding="utf-8")
    (source / FIGURES).mkdir()
    for part in MODULES:
        shutil.copyfile(ROOT / "assignments" / figure_path(part), source / figure_path(part))
    for name, data in checker.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_bytes(data)
    nbformat.write(notebook, str(source / f"{assignment}.ipynb"))
    nbformat.write(questions.nbgrader_notebook(), str(source / WRITTEN))
    handout.refuse_rubrics({str(p.relative_to(source)): p.read_bytes() for p in source.rglob("*") if p.is_file()})
    config.write_text(config_text(), encoding="utf-8")
    return out


def _run(args: argparse.Namespace) -> int:
    try:
        out = write_course(args.out, args.assignment)
    except handout.HandoutError as exc:
        print(f"nbgrader-course: {exc}")
        return 1
    print(
        f"wrote {out / 'nbgrader_config.py'} and {out / 'source' / args.assignment}/ "
        f"({len(MODULES)} stub modules, {args.assignment}.ipynb, {WRITTEN} and the public checker)"
    )
    print(f"next: cd {out} && nbgrader generate_assignment {args.assignment}   (see docs/nbgrader.md)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `nbgrader-course` command to the instructor CLI."""
    parser = subparsers.add_parser("nbgrader-course", help="write an nbgrader course directory for the assignment")
    parser.add_argument("--out", type=Path, required=True, help="the course directory to write")
    parser.add_argument("--assignment", default="captioning", help="assignment name (default: captioning)")
    parser.set_defaults(run=_run)
