"""The written questions of each part: graded by hand, on the analyses the part's notebook demonstrates.

One source per part, instructor/rubrics/<part>.yml (staff only, never handed out):

    questions:
      - id: shuffled_control          # a name: letters, digits and _
        points: 2
        prompt: |                     # markdown, what students read
          ...
        rubric:                       # for the staff: what earns each point; the points add up to the question's
          - points: 1
            criterion: ...

From it come
    - in every part notebook (assignments/ and solutions/, hence the handout): a "Written questions" section at the
      end, each prompt between otter's `<!-- BEGIN QUESTION -->` and `<!-- END QUESTION -->` comments with a
      markdown answer cell, which otter's PDF export (`otter export --filtering`) keeps for Gradescope's manually
      graded questions (question_cells);
    - in the nbgrader course: written.ipynb, each prompt a locked cell and each answer a manually graded cell with
      its points (nbgrader_notebook);
    - in the staff view (`grade --staff`): each answer found in a submission's notebooks beside its rubric
      (autograder/grader/staff.py, answers_text).
The rubric goes into none of the generated notebooks: only the prompts and points do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from shared.parts import BY_MODULE, MODULES

RUBRICS = Path(__file__).resolve().parent / "rubrics"
ANSWER_PLACEHOLDER = "_Type your answer here, replacing this text._"
BEGIN, END = "<!-- BEGIN QUESTION -->", "<!-- END QUESTION -->"
MIN_QUESTIONS, MAX_QUESTIONS = 2, 4
NAME = re.compile(r"[a-z][a-z0-9_]*")


class QuestionError(ValueError):
    """A question source breaks the format; the message names the file and the question."""


@dataclass(frozen=True)
class Criterion:
    points: float
    criterion: str


@dataclass(frozen=True)
class Question:
    part: str
    id: str
    number: str  # "1.2": the part's number, then the question's
    points: float
    prompt: str
    rubric: tuple[Criterion, ...]

    @property
    def key(self) -> str:
        """The question's name across the kit: `<part>-<id>` (an nbgrader grade_id too)."""
        return f"{self.part}-{self.id}"


def _number(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise TypeError(value)
    return float(value)


def load(part: str, folder: Path = RUBRICS) -> list[Question]:
    """The written questions of `part`, in their order; QuestionError when the source breaks the format."""
    import yaml

    path = Path(folder) / f"{part}.yml"
    where = f"instructor/rubrics/{part}.yml"
    if part not in BY_MODULE:
        raise QuestionError(f"part: expected one of {', '.join(MODULES)}, got {part!r}")
    if not path.is_file():
        raise QuestionError(f"{where} is missing: every part has written questions")
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = document.get("questions") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not MIN_QUESTIONS <= len(entries) <= MAX_QUESTIONS:
        raise QuestionError(f"{where}: expected `questions:`, a list of {MIN_QUESTIONS} to {MAX_QUESTIONS}")
    questions = []
    for i, entry in enumerate(entries, start=1):
        label = f"{where}, question {i}"
        if not isinstance(entry, dict) or set(entry) != {"id", "points", "prompt", "rubric"}:
            raise QuestionError(f"{label}: expected exactly the keys id, points, prompt, rubric")
        if not isinstance(entry["id"], str) or not NAME.fullmatch(entry["id"]):
            raise QuestionError(f"{label}: id {entry['id']!r} must be lowercase letters, digits and _")
        if not isinstance(entry["prompt"], str) or not entry["prompt"].strip():
            raise QuestionError(f"{label} ({entry['id']}): the prompt is empty")
        try:
            points = _number(entry["points"])
            rubric = tuple(Criterion(_number(c["points"]), str(c["criterion"]).strip()) for c in entry["rubric"])
        except (TypeError, KeyError):
            raise QuestionError(
                f"{label} ({entry['id']}): points must be positive numbers and the rubric a list "
                "of {points, criterion}"
            ) from None
        if not rubric or any(not c.criterion for c in rubric) or sum(c.points for c in rubric) != points:
            raise QuestionError(
                f"{label} ({entry['id']}): the rubric's points add up to "
                f"{sum(c.points for c in rubric):g}, the question's are {points:g}"
            )
        questions.append(
            Question(part, entry["id"], f"{BY_MODULE[part].number}.{i}", points, entry["prompt"].strip(), rubric)
        )
    if len({q.id for q in questions}) != len(questions):
        raise QuestionError(f"{where}: two questions have the same id")
    return questions


def all_questions(folder: Path = RUBRICS) -> list[Question]:
    """Every part's questions, in part order."""
    return [q for part in MODULES for q in load(part, folder)]


def rubric_texts(folder: Path = RUBRICS) -> list[str]:
    """Every criterion's text: what must never reach a student (the leak scans look for it)."""
    return [c.criterion for q in all_questions(folder) for c in q.rubric]


def heading(q: Question) -> str:
    return f"**Question {q.number}** ({q.points:g} point{'s' * (q.points != 1)}, graded by hand)."


INTRO = (
    "## Written questions\n\nAnswer each question in the markdown cell below it, in a few sentences, from what "
    "this notebook's cells show when your module works. They are graded by hand, not by `grader.check`."
)


def question_cells(part: str) -> list:
    """The notebook cells of `part`'s written questions (otter's manually graded question format): an introduction,
    then per question its prompt opening otter's question block, a markdown answer cell and the block's end."""
    import nbformat

    cells = [nbformat.v4.new_markdown_cell(INTRO)]
    for q in load(part):
        prompt = nbformat.v4.new_markdown_cell(f"{BEGIN}\n\n{heading(q)} {q.prompt}")
        prompt.metadata["captionkit"] = {"question": q.key, "points": q.points}
        answer = nbformat.v4.new_markdown_cell(ANSWER_PLACEHOLDER)
        answer.metadata["captionkit"] = {"answer": q.key}
        cells += [prompt, answer, nbformat.v4.new_markdown_cell(END)]
    return cells


def nbgrader_notebook():
    """written.ipynb of the nbgrader course: per question a locked prompt cell and a manually graded answer cell
    (grade_id `<part>-<id>`, its points); nbgrader's gradebook then lists each question for manual grading."""
    import nbformat

    cells = [
        nbformat.v4.new_markdown_cell(
            "# Written questions\n\nAnswer each question in the cell below it, in a few sentences. The questions are "
            "about what each part's notebook (in the course's handout) shows once your module works. They are graded "
            "by hand.",
            id="written-intro",
        )
    ]
    for q in all_questions():
        prompt = nbformat.v4.new_markdown_cell(
            f"### Part {BY_MODULE[q.part].number}: {BY_MODULE[q.part].title}\n\n{heading(q)} {q.prompt}",
            id=f"{q.key}-prompt",
        )
        prompt.metadata["nbgrader"] = {
            "grade": False,
            "solution": False,
            "locked": True,
            "task": False,
            "grade_id": f"{q.key}-prompt",
            "schema_version": 3,
        }
        answer = nbformat.v4.new_markdown_cell("YOUR ANSWER HERE", id=q.key)
        answer.metadata["nbgrader"] = {
            "grade": True,
            "solution": True,
            "locked": False,
            "task": False,
            "points": int(q.points) if q.points.is_integer() else q.points,
            "grade_id": q.key,
            "schema_version": 3,
        }
        cells += [prompt, answer]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.validate(nb)
    return nb


def answers_in(nb) -> dict[str, str]:
    """{question key: the answer's text} of a notebook (a part notebook or written.ipynb): the cell marked as the
    answer (captionkit metadata, or nbgrader's grade_id), else the cell right after the question's prompt (a student
    may have replaced the answer cell); an answer left as the placeholder is empty."""
    keys = {q.key for q in all_questions()}
    cells = list(nb.get("cells", []))

    def text(cell) -> str:
        body = "".join(cell.get("source", "")).strip()
        return "" if body in (ANSWER_PLACEHOLDER, "YOUR ANSWER HERE", END) else body

    found: dict[str, str] = {}
    for cell in cells:
        meta = cell.get("metadata", {})
        key = meta.get("captionkit", {}).get("answer") or meta.get("nbgrader", {}).get("grade_id")
        if key in keys:
            found[key] = text(cell)
    for i, cell in enumerate(cells[:-1]):
        asked = cell.get("metadata", {}).get("captionkit", {}).get("question")
        if asked in keys and asked not in found:
            found[asked] = text(cells[i + 1])
    return found


# -- the PDF for Gradescope's manually graded questions ---------------------------------------------------------


def export_pdf(notebook: Path, pdf: Path, chromium: str | None = None, timeout: int = 120) -> Path:
    """The PDF a student uploads for Gradescope's manually graded questions: otter's export of `notebook` with
    filtering (only the cells between otter's BEGIN and END QUESTION comments, a page break after each), through
    otter's HTML template (`otter export --filtering --pagebreaks -e html`), printed by a Chromium of this machine
    (`chromium`, else CAPTIONKIT_CHROMIUM or `chromium` on PATH) instead of the one otter's exporter downloads
    with playwright. No LaTeX needed."""
    import os
    import shutil
    import subprocess
    import tempfile

    import nbconvert
    from otter.export.exporters.base_exporter import TEMPLATE_DIR
    from otter.export.exporters.via_html import PDFViaHTMLExporter

    browser = (
        chromium
        or os.environ.get("CAPTIONKIT_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not browser:
        raise FileNotFoundError(
            "no Chromium to print the PDF: install one (Debian: apt-get install chromium) or set CAPTIONKIT_CHROMIUM"
        )
    nb = PDFViaHTMLExporter.load_notebook(str(notebook), filtering=True, pagebreaks=True)
    exporter = nbconvert.HTMLExporter(extra_template_basedirs=[str(TEMPLATE_DIR)], template_name="via_html")
    html, _ = exporter.from_notebook_node(nb)
    pdf = Path(pdf).resolve()
    with tempfile.TemporaryDirectory(prefix="captionkit-pdf-") as tmp:
        page = Path(tmp) / "questions.html"
        page.write_text(html, encoding="utf-8")
        pdf.unlink(missing_ok=True)
        done = subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                f"--user-data-dir={tmp}/profile",
                "--virtual-time-budget=10000",
                "--no-pdf-header-footer",
                f"--print-to-pdf={pdf}",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if not pdf.is_file():
        raise RuntimeError(f"Chromium printed no PDF (exit {done.returncode}): {done.stderr[-1000:]}")
    return pdf


def _run_pdf(args) -> int:
    path = export_pdf(args.notebook, args.out or args.notebook.with_suffix(".pdf"))
    print(f"wrote {path}: the written questions and their answers, for Gradescope's manually graded questions")
    return 0


def register(subparsers) -> None:
    """Add the `written-pdf` command to the instructor CLI."""
    parser = subparsers.add_parser(
        "written-pdf",
        help="export a part notebook's written questions and answers as "
        "the PDF Gradescope's manually graded questions take (otter's filtered export)",
    )
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--out", type=Path, help="the PDF to write (default: beside the notebook)")
    parser.set_defaults(run=_run_pdf)
