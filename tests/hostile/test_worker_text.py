"""What the worker sends back as text, and what of it reaches a person (docs/security.md, rows A39 and A40).

A39: a location in a student's traceback is the staged module's own file name, which the grader knows, and a line
number checked against that file: never a file name, a function name or a source line the worker chose, whose
text student code can set to a hidden check's inputs. A40: the grader's round of every public check (its cases drawn
from the hidden seed) runs after all public checks, in a worker of its own, so nothing it passes to the student's
code can be shown in a public check's feedback. A52: the line is the module's to choose, so where the inputs are the
grader's (its round of a public check, a hidden check) a student sees only the exception's kind.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from autograder.grader.report.html import render_report
from autograder.grader.results import gradescope_results
from autograder.public.checks import PUBLIC_ROUND, registered, running_as
from autograder.public.client import StudentError
from autograder.public.client.replies import error_fields
from autograder.public.outcomes import GRADER_CASES, raised_at
from autograder.worker import recipes
from autograder.worker.main import sanitize
from tests.hostile import harness
from tests.hostile.harness import assert_contained, build, run_grade
from tests.hostile.test_hostile import BOUND, FIRST, UNCHANGED, public_and

CLIPPED = "clipped_counts_clip_at_the_most_in_one_reference"  # the public bleu check after FIRST
SOURCE = "def f(x):\n    return 1 / x\n\n\nclass Model:\n    def g(self):\n        return [f(0) for _ in 'a']\n"


def public_ngram_cases() -> list:
    """[[tokens, n], ...]: what the public round of FIRST sends ngram_counts, recorded as a student can record it, by
    running the handout's check (here against the reference, in this process)."""
    import autograder.public.checks.bleu  # noqa: F401 (registers the checks)
    import solutions.bleu

    seen = []

    class Recorder:
        def call(self, recipe, timeout=None, deadline=None, **kwargs):
            if recipe == "bleu.ngram_counts":
                seen.append([list(kwargs["tokens"]), kwargs["n"]])
            return sanitize(recipes.load("bleu")[recipe](solutions.bleu, **kwargs))

    (first,) = [c for c in registered("bleu") if c.name == FIRST]
    with running_as("public", PUBLIC_ROUND):
        first.fn(Recorder(), None)
    assert seen
    return seen


@pytest.fixture(autouse=True, scope="module")
def adopt_orphans():
    harness.set_subreaper(True)
    yield
    harness.set_subreaper(False)
    harness.reap_orphans()


# -- A39: the location is the grader's, from the module it staged ---------------------------------------------


def located(where: str, module: str = "bleu", source: str = SOURCE) -> StudentError:
    """The StudentError the grader builds from an error message whose traceback text is `where`."""
    fields = error_fields({"type": "ValueError", "message": "m", "where": where}, module, source)
    assert fields is not None
    return StudentError(*fields)


def test_A39_a_location_names_the_staged_module_and_a_line_of_it():
    exc = located('  File "bleu.py", line 2, in forged_name\n    forged source line\n')
    assert exc.where == '  File "bleu.py", line 2, in f\n    return 1 / x\n'  # the grader's own text of line 2
    assert raised_at(exc.where) == "bleu.py:2"
    inner = located('  File "bleu.py", line 7, in x\n    y\n  File "bleu.py", line 2, in z\n')
    assert inner.where.splitlines()[0] == '  File "bleu.py", line 7, in g' and raised_at(inner.where) == "bleu.py:2"


@pytest.mark.parametrize(
    "where",
    [
        '  File "LEAK<<' + "['a red circle'] " * 80 + '>>.py", line 1, in f\n',  # a long name holding inputs
        '  File "decoding.py", line 2, in f\n',  # another file of the submission
        '  File "../solutions/bleu.py", line 2, in f\n',  # a reference's path
        '  File "/submission/bleu.py", line 2, in f\n',  # the path, not the name
        '  File "bleu.py", line 8, in f\n',  # past the file's last line
        '  File "bleu.py", line 0, in f\n',
        '  File "bleu.py", line 10000000000000000000000, in f\n',
        '  File "bleu.py ", line 2, in f\n',
        'LEAK  File "bleu.py", line 2, in f\n',  # not at a line's start
        '    File "bleu.py", line 2, in f\n',  # a source line that looks like one
        'File "bleu.py", line 2, in f\n',
        '  File "bleu.py", line 99, in f", line 2, in g\n',  # a location in the function's slot
    ],
)
def test_A39_worker_text_that_is_not_a_line_of_the_module_is_dropped(where):
    exc = located(where)
    assert exc.where == "" and raised_at(exc.where) == "", exc.where


def test_A39_only_the_last_frames_are_kept_and_nothing_else_of_the_worker_s_text():
    hostile = "".join(f'  File "bleu.py", line {1 + i % 7}, in LEAK{i}\n    LEAK{i}\n' for i in range(50))
    exc = located(hostile + "LEAK trailing text")
    assert "LEAK" not in exc.where and len(exc.where.splitlines()) <= 6, exc.where
    assert raised_at(exc.where) == f"bleu.py:{1 + 49 % 7}"


def test_A39_the_location_is_checked_against_the_module_whatever_its_line_endings():
    # Python ends a line at \r\n, \r or \n only (str.splitlines would also split at the form feed and U+2028 here).
    source = "a = 1\r\nb = 2\rc = 3  # \x0c \u2028 x\ne = 4\n"
    assert (
        located('  File "bleu.py", line 4, in x\n', source=source).where
        == '  File "bleu.py", line 4, in <module>\n    e = 4\n'
    )
    assert located('  File "bleu.py", line 5, in x\n', source=source).where == ""


A39_VARIANTS = ("long_name", "other_file", "location_text", "line_number", "reducer_replaced")


@pytest.fixture(scope="module", params=A39_VARIANTS)
def a39(request, tmp_path_factory):
    folder = build(
        "A39_traceback_file_name",
        tmp_path_factory.mktemp("A39") / "sub",
        VARIANT=request.param,
        PUBLIC_NGRAM_CASES=public_ngram_cases(),
    )
    with public_and(UNCHANGED):
        return request.param, run_grade(folder, ("bleu",), public_only=False)


def _line_of(folder: Path, text: str) -> int:
    (number,) = [i for i, line in enumerate((folder / "bleu.py").read_text().splitlines(), 1) if text in line]
    return number


def test_A39_a_traceback_s_file_name_carries_no_hidden_input(a39):
    """A hidden check and the grader's round of a public check name only a line of the student's bleu.py."""
    variant, graded = a39
    assert_contained(graded, within=BOUND)
    # The module's own frame (the line that ran the forged code) is all that is left of the traceback, for the staff;
    # where the worker's reducer was replaced, the one line of bleu.py its text names. A student sees no line (A52).
    line = 3 if variant == "reducer_replaced" else _line_of(graded.folder, "exec(compile(body, name")
    for name in (UNCHANGED, FIRST):
        assert f'File "bleu.py", line {line}, in ' in graded.result(name).staff_note, graded.result(name).staff_note
    assert graded.result(UNCHANGED).output == "your code raised an exception"
    assert graded.result(FIRST).output == f"your code raised an exception {GRADER_CASES}"
    for r in graded.results():
        assert "LEAK" not in r.output and "LEAK" not in r.staff_note, (r.name, r.output, r.staff_note)


# -- A40: the grader's round of a public check runs after every public check ----------------------------------


def test_A40_the_grader_s_round_shows_nothing_in_a_later_public_check(tmp_path):
    folder = build("A40_grader_round_kept_for_public", tmp_path / "sub", PUBLIC_NGRAM_CASES=public_ngram_cases())
    graded = run_grade(folder, ("bleu",))
    assert_contained(graded, within=BOUND)
    clipped = graded.result(CLIPPED)
    assert "PROBE" not in clipped.public_round and "PROBE" not in clipped.output, clipped.output
    assert clipped.public_round == "passed"
    # What the grader's round passed reached only that round, whose failure shows no message.
    assert clipped.output == f"your code raised an exception {GRADER_CASES}"
    # Each public check's public round shows what a grade without the grader's rounds shows.
    alone = run_grade(folder, ("bleu",), grader_cases=False)
    assert {r.name: r.public_round for r in graded.results()} == {r.name: r.output for r in alone.results()}


# -- A52: the line number is a channel where the inputs are the grader's ---------------------------------------

RANDOM_NGRAMS = "ngram_and_clipped_counts_on_random_captions"  # a hidden check that calls ngram_counts itself


@pytest.fixture(scope="module")
def a52(tmp_path_factory):
    folder = build(
        "A52_line_number_channel", tmp_path_factory.mktemp("A52") / "sub", PUBLIC_NGRAM_CASES=public_ngram_cases()
    )
    with public_and(RANDOM_NGRAMS):
        return run_grade(folder, ("bleu",), public_only=False)


def _chosen_line(folder: Path, note: str) -> tuple[int, int]:
    """(the line the staff note says the module raised from, the line the module chose for the case the note names:
    the first of its _RAISE_AT lines plus its code for that case, as the submission computes it)."""
    raised = [int(n) for n in re.findall(r'File "bleu\.py", line (\d+), in ', note)]
    case = re.search(r"tokens=(?:<list of (\d+)>|(\[.*?\])), n=(\d+)", note)
    assert raised and case, note
    length = int(case[1]) if case[1] else len(ast.literal_eval(case[2]))
    code = 4 * (length % 16) + (int(case[3]) - 1) % 4
    return raised[-1], _line_of(folder, "_RAISE_AT = [") + 1 + code


def test_A52_a_line_chosen_by_the_grader_s_inputs_is_not_shown(a52):
    """The grader's round of a public check and a hidden check show the exception's kind alone: the line, which the
    module chose from the grader's input, reaches the course staff only."""
    graded = a52
    assert_contained(graded, within=BOUND)
    first, hidden = graded.result(FIRST), graded.result(RANDOM_NGRAMS)
    assert first.public_round == "passed"
    for result, shown in (
        (first, f"your code raised an exception {GRADER_CASES}"),
        (hidden, "your code raised an exception"),
    ):
        raised, chosen = _chosen_line(graded.folder, result.staff_note)
        assert raised == chosen  # the channel is there: the staff see the chosen line
        assert result.output == shown, result.output
        assert not re.search(r"\d|bleu\.py|line", result.output), result.output
    # Nor in what is handed out: results.json (Gradescope's too) and the feedback report.
    shown = json.dumps(gradescope_results(graded.report)) + render_report(graded.report, submission="s")
    assert "_RAISE_AT" not in shown and not re.search(r"bleu\.py:\d|line \d", shown)


# -- A57: numbers the worker sends, printed whole in a hidden training check's explanation ---------------------


@pytest.mark.slow
def test_A57_a_hidden_training_check_shows_no_number_the_worker_chose(tmp_path):
    """The module makes the grader's recipe read back training losses of its choosing (2**52 + a payload: five bytes a
    number) and a model that learns nothing; the hidden training check fails and says the loss did not fall, without
    the numbers, which only the staff see. Before: "(first epoch 4503599627450913.000, last ...)" in the feedback."""
    graded = run_grade(build("A57_loss_figures_as_a_channel", tmp_path / "sub"), ("lstm_a",), public_only=False)
    (trained,) = [r for r in graded.report.results if r.name == "trained_a4_reaches_the_threshold"]
    assert not trained.passed, graded.describe()
    assert "the training loss did not fall: no learning signal reaches the parameters" in trained.output, trained.output
    assert "4503599627" not in trained.output and "80417" not in trained.output, trained.output
    assert "4503599627450913" in trained.staff_note, trained.staff_note[:2000]
    # results.json (the feedback report's training curves are the residual channel the security notes name)
    assert "4503599627450913" not in json.dumps(gradescope_results(graded.report))


# -- A58: the exception's kind is a channel where the inputs are the grader's ------------------------------------


def test_A58_a_kind_chosen_by_the_grader_s_inputs_is_not_shown(tmp_path):
    """The module raises one of 64 built-in exceptions, chosen by a character of the grader's input, in a hidden check
    and in the grader's round of a public check (shown at once): the student reads that the code raised, the kind
    only the staff."""
    folder = build("A58_exception_kind_channel", tmp_path / "sub", PUBLIC_NGRAM_CASES=public_ngram_cases())
    with public_and(RANDOM_NGRAMS):
        graded = run_grade(folder, ("bleu",), public_only=False)
    assert_contained(graded, within=BOUND)
    first, hidden = graded.result(FIRST), graded.result(RANDOM_NGRAMS)
    assert first.public_round == "passed"
    kinds = set(
        re.findall(
            r"^([A-Za-z]+(?:Error|Exception)|[A-Z][a-z]+[A-Z][A-Za-z]+): LEAK",
            first.staff_note + "\n" + hidden.staff_note,
            re.M,
        )
    )
    assert kinds, (first.staff_note[:500], hidden.staff_note[:500])  # the channel is there: the staff see the kind
    assert first.output == f"your code raised an exception {GRADER_CASES}", first.output
    assert hidden.output == "your code raised an exception", hidden.output
    shown = json.dumps(gradescope_results(graded.report)) + render_report(graded.report, submission="s")
    for kind in kinds:
        assert f"raised {kind}" not in shown, kind
