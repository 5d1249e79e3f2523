"""The written questions (instructor/rubrics/<part>.yml, instructor/questions.py) through every path: the part
notebooks in otter's manually graded question format (drift-tested against their source, never the rubric), otter's
filtered PDF export, the nbgrader course's manually graded cells graded by hand through nbgrader's gradebook API,
the handout and the nbgrader release without any rubric, and the staff view with each answer beside its rubric.
The notebooks' execution with the questions in them is tests/instructor/test_notebooks.py's (every part, stubs and reference)."""

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.grader import staff
from instructor import handout, nbgrader_course, notebooks, questions
from shared.parts import BY_MODULE, MODULES

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "captioning"


def notebook(variant: str, part: str) -> dict:
    return json.loads((ROOT / variant / f"{part}.ipynb").read_text())


def answered(nb: dict, answers: dict[str, str]) -> dict:
    """`nb` with the answer cells of `answers` ({question key: text}) filled in, as a student would."""
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        key = cell["metadata"].get("captionkit", {}).get("answer") or cell["metadata"].get("nbgrader", {}).get(
            "grade_id"
        )
        if key in answers:
            cell["source"] = answers[key]
    return nb


def test_every_part_has_two_to_four_questions_whose_rubrics_add_up():
    for part in MODULES:
        found = questions.load(part)
        assert 2 <= len(found) <= 4, part
        assert [q.number for q in found] == [f"{BY_MODULE[part].number}.{i}" for i in range(1, len(found) + 1)]
        for q in found:
            assert sum(c.points for c in q.rubric) == q.points > 0 and len(q.rubric) >= 1


@pytest.mark.parametrize(
    "broken, message",
    [
        ("questions: []\n", "a list of 2 to 4"),
        (
            "questions:\n  - {id: a, points: 2, prompt: p, rubric: [{points: 1, criterion: c}]}\n"
            "  - {id: b, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n",
            "add up to 1, the question's are 2",
        ),
        (
            "questions:\n  - {id: a, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n"
            "  - {id: a, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n",
            "two questions have the same id",
        ),
        (
            "questions:\n  - {id: A-1, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n"
            "  - {id: b, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n",
            "must be lowercase",
        ),
        (
            "questions:\n  - {id: a, points: -1, prompt: p, rubric: [{points: 1, criterion: c}]}\n"
            "  - {id: b, points: 1, prompt: p, rubric: [{points: 1, criterion: c}]}\n",
            "positive numbers",
        ),
    ],
)
def test_a_broken_source_is_refused_naming_the_file_and_the_question(tmp_path, broken, message):
    (tmp_path / "bleu.yml").write_text(broken)
    with pytest.raises(questions.QuestionError, match=re.escape(message)) as error:
        questions.load("bleu", tmp_path)
    assert "instructor/rubrics/bleu.yml" in str(error.value)


@pytest.mark.parametrize("part", MODULES)
def test_the_notebooks_carry_each_prompt_and_its_points_and_never_the_rubric(part):
    source = (ROOT / "instructor" / "notebook_sources" / f"{part}.py").read_text()
    for variant in ("assignments", "solutions"):
        committed = (ROOT / variant / f"{part}.ipynb").read_text()
        # Drift: the committed notebook is what the notebook source and the question source give now.
        assert committed == notebooks.build_notebook(part, variant, source, f"{part}.py"), (
            f"{variant}/{part}.ipynb: run `python -m instructor notebooks`"
        )
        cells = json.loads(committed)["cells"]
        text = "\n".join("".join(c["source"]) for c in cells)
        for q in questions.load(part):
            [at] = [i for i, c in enumerate(cells) if c["metadata"].get("captionkit", {}).get("question") == q.key]
            prompt, answer, end = ("".join(c["source"]) for c in cells[at : at + 3])
            assert prompt.startswith(questions.BEGIN) and q.prompt in prompt and questions.heading(q) in prompt
            assert answer == questions.ANSWER_PLACEHOLDER and end == questions.END
            assert cells[at]["metadata"]["captionkit"]["points"] == q.points
            for criterion in q.rubric:
                assert criterion.criterion not in text and criterion.criterion not in committed
        assert text.count(questions.BEGIN) == text.count(questions.END) == len(questions.load(part))


def test_the_handout_holds_no_rubric_and_a_leaked_one_stops_its_build():
    files = handout.build()
    assert {f"{part}.ipynb" for part in MODULES} <= set(files)
    assert not [name for name in files if "rubrics" in name]
    handout.refuse_rubrics(files)  # nothing found
    criterion = questions.load("bleu")[1].rubric[0].criterion
    leaked = json.loads(files["bleu.ipynb"])
    leaked["cells"][-2]["source"] = criterion.replace(" ", "\n", 3)  # a student's copy, rewrapped
    with pytest.raises(handout.HandoutError, match=r"bleu\.ipynb holds the staff rubric"):
        handout.refuse_rubrics({**files, "bleu.ipynb": json.dumps(leaked).encode()})


def test_otter_exports_the_answered_questions_as_a_pdf(tmp_path):
    from otter.export.exporters.via_html import PDFViaHTMLExporter

    from tests import browser

    browser.chromium()  # skips (or fails under CAPTIONKIT_REQUIRE_BROWSER=1) without one
    keys = [q.key for q in questions.load("bleu")]
    path = tmp_path / "bleu.ipynb"
    path.write_text(json.dumps(answered(notebook("assignments", "bleu"), {keys[0]: "Every **unigram** matches."})))
    # What otter's filtering keeps: the questions' blocks only, each prompt with the answer below it.
    kept = PDFViaHTMLExporter.load_notebook(str(path), filtering=True, pagebreaks=True)
    text = "\n".join(c.source for c in kept.cells)
    assert "Every **unigram** matches." in text and "grader.check" not in text and "import" not in text
    assert [q.prompt in text for q in questions.load("bleu")] == [True] * len(keys)
    pdf = questions.export_pdf(path, tmp_path / "bleu.pdf")
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type\s*/Page[^s]", data)) >= len(keys)  # a page break after each question


def test_nbgrader_grades_a_written_answer_by_hand_and_releases_no_rubric(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    from tests.instructor.test_nbgrader_course import kit_environment

    kit_environment(monkeypatch)
    path = nbgrader_course.write_course(tmp_path / "course", ASSIGNMENT)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(path)).load_config()
    # The grade cells run the kit's grader, which tests/instructor/test_nbgrader_course.py covers: here only the written notebook.
    config.Execute.enabled = False
    config.ClearOutput.enabled = False
    api = NbGraderAPI(config=config)
    result = api.generate_assignment(ASSIGNMENT)
    assert result["success"], result["log"]
    release = path / "release" / ASSIGNMENT
    released = nbformat.read(str(release / nbgrader_course.WRITTEN), as_version=4)
    handout.refuse_rubrics({str(p.relative_to(release)): p.read_bytes() for p in release.rglob("*") if p.is_file()})
    everything = questions.all_questions()
    answers = [c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [(c.metadata.nbgrader.grade_id, c.metadata.nbgrader.points, c.source) for c in answers] == [
        (q.key, q.points, "YOUR ANSWER HERE") for q in everything
    ]
    assert all(c.metadata.nbgrader.get("solution") and not c.metadata.nbgrader.get("locked") for c in answers)

    folder = path / "submitted" / "ada" / ASSIGNMENT
    shutil.copytree(release, folder)
    answer = "The image pairing carries the score: shuffled, it is chance."
    nbformat.write(
        nbformat.from_dict(answered(released, {everything[0].key: answer})), str(folder / nbgrader_course.WRITTEN)
    )
    result = api.autograde(ASSIGNMENT, "ada")
    assert result["success"], result["log"]
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        written = gb.find_submission_notebook("written", ASSIGNMENT, "ada")
        grades = {g.name: g for g in written.grades}
        assert set(grades) == {q.key for q in everything}
        first = grades[everything[0].key]
        assert first.needs_manual_grade and first.max_score == everything[0].points and first.score == 0
        blank = grades[everything[1].key]  # unanswered: zero without waiting for a grader
        assert not blank.needs_manual_grade and blank.score == 0
        assert written.max_score == sum(q.points for q in everything)
        # The TA grades the answer by hand, as formgrader's grade handler does through this API.
        first.manual_score = 1.5
        first.needs_manual_grade = False
        gb.db.commit()
    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        written = gb.find_submission_notebook("written", ASSIGNMENT, "ada")
        assert written.score == 1.5 and not written.needs_manual_grade
        assert gb.find_submission(ASSIGNMENT, "ada").score == 1.5 + sum(  # with the grade cells' automatic points
            g.score
            for nb in gb.find_submission(ASSIGNMENT, "ada").notebooks
            if nb.name == ASSIGNMENT
            for g in nb.grades
        )


def test_the_staff_view_shows_each_answer_beside_its_rubric(tmp_path):
    bleu = questions.load("bleu")
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "bleu.ipynb").write_text(
        json.dumps(answered(notebook("assignments", "bleu"), {bleu[0].key: "Unigrams all match.\nOrder is lost."}))
    )
    (folder / "decoding.ipynb").write_text("{not json")  # unreadable: skipped, not fatal
    text = staff.written_answers_text(folder)
    blocks = text.split(staff.SEPARATOR)
    assert blocks[0].startswith(f"{staff.WRITTEN_HEADER}{len(bleu)} found") and len(blocks) == len(bleu) + 1
    first = blocks[1]
    assert first.startswith(f"Written question 3.1 {bleu[0].key} (2 points)")
    assert first.index("    Unigrams all match.\n    Order is lost.") < first.index("rubric")
    assert all(f"[{c.points:g}] {c.criterion}" in first for c in bleu[0].rubric)
    assert "(no answer)" in blocks[2]
    # In a batch's staff view, after the checks' blocks; replaced, not repeated, on a second run.
    out = tmp_path / "out"
    view = staff.batch_staff_path(out, "submission")
    staff.write_staff("Staff view of submission: 1 / 2, 0 failed checks\nWARNING\n", view)
    assert staff.add_written_answers(tmp_path, out) == 1
    assert staff.add_written_answers(tmp_path, out) == 1
    written = view.read_text()
    assert written.startswith("Staff view of submission") and written.count(staff.WRITTEN_HEADER) == 1
    assert written.endswith(text) and view.stat().st_mode & 0o077 == 0
    assert staff.written_answers_text(tmp_path / "out") == ""  # no notebook: nothing to add


def test_a_part_regrade_merges_a_staff_view_that_holds_written_answers():
    bleu = questions.load("bleu")
    written = f"{staff.WRITTEN_HEADER}1 found\n\nWritten question 3.1 {bleu[0].key} (2 points): ...\n"
    old = staff.with_written_answers(
        "Staff view of a: 1 / 2, 1 failed check\nWARNING\n\n3.1 bleu.x (public, 0 of "
        "1): d\n  the student saw:\n    no\n",
        written,
    )
    new = "Staff view of a: 2 / 2, 0 failed checks\nWARNING\n"
    merged = staff.merged_text(old, new, ("bleu",))
    assert staff.WRITTEN_HEADER not in merged and "3.1 bleu.x" not in merged


@pytest.mark.parametrize(
    "text",
    [
        '{"cells": NaN}',
        '{"cells": ' + "[" * 200_000 + "]" * 200_000 + "}",
        '{"cells": [1, "x", null, {"cell_type": 7, "source": 5, "metadata": []}]}',
        '{"cells": {"a": 1}}',
        "[1, 2]",
        '{"cells": [{"metadata": {"nbgrader": 5}}]}',
    ],
    ids=[
        "NaN cells",
        "nested past the decoder",
        "cells of other types",
        "cells a dict",
        "a list",
        "nbgrader metadata a number",
    ],
)
def test_A67_a_hostile_notebook_leaves_the_staff_view_to_the_others(tmp_path, text):
    """A submitted notebook is read for its written answers (the staff view): one whose JSON decodes to anything
    (NaN cells, nesting past the decoder's recursion limit, cells of other types) is skipped as unreadable, and the
    answers of the other notebooks are shown. Before, `grade --staff` crashed on the first two (TypeError,
    RecursionError) and wrote no staff view."""
    bleu = questions.load("bleu")
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "bleu.ipynb").write_text(
        json.dumps(answered(notebook("assignments", "bleu"), {bleu[0].key: "Unigrams all match."}))
    )
    (folder / "decoding.ipynb").write_text(text)
    written = staff.written_answers_text(folder)
    assert written.startswith(f"{staff.WRITTEN_HEADER}{len(bleu)} found") and "    Unigrams all match." in written
