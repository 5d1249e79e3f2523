"""Hostile and broken submissions: one per row of the catalogue in docs/security.md (F1-F15 faults, A1-A25
attacks), each graded by the real grader, asserting the row's required outcome and, for every row, what must
hold whatever a submission does (harness.assert_contained): grading ends within a bound, no process of the
sandbox user outlives it, the kit's files are untouched, and nothing hidden reaches what students see.

Rows whose outcome depends on the user switch (reading or writing as another user, the process limit, the
sweep of leftover processes) skip with the reason when the worker cannot run as the sandbox user (not root).
An attack that still succeeds is an `xfail(strict=True)` test naming the hole; docs/security.md says how to
close it.

Most rows grade Part 3 (bleu: its public checks in a few seconds) with public checks only; a row grades
another part too (Part 2, decoding, from the reference) where the attack could reach beyond its own part, and
Part 4 (attention) where the attack needs tensors or a banned op. Timeouts are shortened (per-call limit 3 s,
start-up limit 5 s) to keep the suite quick: the mechanism is the same at any length.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import hashlib
import importlib
import json
import os
import py_compile
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from autograder.grader import grades_table
from autograder.grader import rubric as rubric_mod
from autograder.grader.context import GradingContext, hidden_seed
from autograder.grader.isolation import detect
from autograder.grader.results import gradescope_results, write_json_atomic
from autograder.public import client, limits
from autograder.public.client import Limits
from autograder.worker import confine, landlock, protocol
from tests.hostile import harness
from tests.hostile.harness import ROOT, assert_contained, build, run_grade

FIRST = "ngram_counts_is_the_counter_of_ngrams"  # the first public bleu check: where probes report
CLIPPED = "clipped_counts_clip_at_the_most_in_one_reference"
WORKED = "corpus_bleu_reproduces_the_worked_examples"  # the check that sends "the cat is on the mat"
SELF = "bleu_of_a_corpus_against_itself_is_one"
TIES = "closest_length_ties_go_to_the_shorter_reference"
# the public checks whose cases include the lecture's "the cat is on the mat" (the self-corpus identity's anchor is
# that example, and the ties' check takes the same anchor)
SENDS_THE_CAT = (WORKED, SELF, TIES)
CORPUS = (WORKED, "bleu_of_a_corpus_against_itself_is_one", "brevity_penalty_uses_the_closest_reference_lengths")
# every public bleu check that calls corpus_bleu: a broken corpus_bleu fails them all
CALLS_CORPUS_BLEU = (
    *CORPUS,
    "closest_length_ties_go_to_the_shorter_reference",
    "bleu_is_zero_when_a_precision_is_zero_or_c_is_zero",
)
UNCHANGED = "bleu_functions_leave_their_inputs_unchanged"  # a hidden bleu check without hypothesis: one call
PARITY = "attend_matches_scaled_dot_product_attention"
GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"
CALL_TIMEOUT = 3.0
STARTUP_TIMEOUT = 5.0
BOUND = 90.0  # seconds for grading one part's public checks, however hostile (start-ups included)


@pytest.fixture(scope="module", autouse=True)
def adopt_orphans():
    """This process adopts (and harness.run_grade reaps) the sandbox processes the sweep kills after they left
    the worker, so a fork bomb leaves no zombies in the machine's process table (see docs/security.md)."""
    harness.set_subreaper(True)
    yield
    harness.set_subreaper(False)
    harness.reap_orphans()


# The isolation mode a run requires, or "" for whatever this machine allows: .ci/run sets "user" when it runs as root,
# so that a checkout the sandbox user cannot read (which makes the grader fall back to "process" mode) fails the run
# instead of skipping every test of the user switch.
REQUIRED_MODE = os.environ.get("CAPTIONKIT_REQUIRE_ISOLATION", "")


def user_switch(what: str) -> None:
    """Skip unless workers run as the dedicated sandbox user (root with setpriv); fail instead where the run requires
    that mode (REQUIRED_MODE)."""
    isolation = detect()
    if isolation.mode != "user":
        reason = f"{what} needs the worker to run as the dedicated sandbox user, which needs root ({isolation.note})"
        if REQUIRED_MODE == "user":
            pytest.fail(f"{reason}, and CAPTIONKIT_REQUIRE_ISOLATION=user requires it", pytrace=False)
        pytest.skip(reason)


def network_namespace(what: str) -> None:
    isolation = detect()
    if not isolation.network_namespace:
        pytest.skip(f"{what} needs a network namespace for the worker ({isolation.note})")


@pytest.mark.caps
def test_the_grader_isolates_its_workers_as_the_run_requires():
    """Under CAPTIONKIT_REQUIRE_ISOLATION (.ci/run sets "user" as root) the grader runs its workers in that mode: a
    fallback to a weaker one (say, a checkout the sandbox user cannot read) fails here by name, not as a row of
    skipped tests."""
    isolation = detect()
    if not REQUIRED_MODE:
        pytest.skip(f"no isolation mode required (CAPTIONKIT_REQUIRE_ISOLATION unset); this machine: {isolation.note}")
    assert isolation.mode == REQUIRED_MODE, f"CAPTIONKIT_REQUIRE_ISOLATION={REQUIRED_MODE}, but {isolation.note}"


@contextlib.contextmanager
def public_tmp(prefix: str):
    """A fresh folder in the system's temporary folder, which the sandbox user can reach (as the grader's own
    scratch is); removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, 0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def tmp_public():
    with public_tmp("captionkit-hostile-") as path:
        yield path


@pytest.fixture
def private(tmp_public):
    """A root-only folder (mode 700) in the temporary folder, holding sentinel.txt and results/."""
    return harness.private_dir(tmp_public / "private")


@contextlib.contextmanager
def rubric_subset(part: str, keep):
    """Grade only the checks of `part` for which keep(name, entry) is true (the other parts unchanged)."""
    real = rubric_mod.load

    def load(*args, **kwargs):
        rubric = real(*args, **kwargs)
        rubric[part] = {name: e for name, e in rubric[part].items() if keep(name, e)}
        return rubric

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rubric_mod, "load", load)
        yield


def public_and(*hidden: str):
    """The public checks, and the named hidden ones (one quick hidden check shows what hidden feedback holds)."""
    return rubric_subset("bleu", lambda name, e: e.visibility == "public" or name in hidden)


def points(part: str, *failed: str, hidden: tuple[str, ...] = ()) -> tuple[float, float]:
    """(got, out of) for the public checks of `part` and the hidden ones named, when exactly the checks `failed`
    fail: read from the rubric, so that the rows follow its points and its public checks."""
    graded = {name: e for name, e in rubric_mod.load()[part].items() if e.visibility == "public" or name in hidden}
    out_of = sum(e.points for e in graded.values())
    return out_of - sum(graded[name].points for name in failed), out_of


def short_call_timeout(mp: pytest.MonkeyPatch) -> None:
    """Each call of the bleu checks limited to CALL_TIMEOUT seconds (LIMITS.bleu_call)."""
    mp.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, bleu_call=CALL_TIMEOUT))


def passed(graded, *names) -> bool:
    return all(graded.result(n).passed for n in names)


# =========================================================================== faults (honest mistakes)


def test_F1_syntax_error_costs_only_its_part(tmp_path):
    graded = run_grade(build("F1_syntax_error", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    assert graded.total("bleu")[0] == 0
    for r in graded.results("bleu"):
        assert r.output.startswith("bleu.py could not be imported: SyntaxError: "), r.output
    assert graded.full_marks("decoding"), graded.describe()


@pytest.mark.parametrize(
    "row, message",
    [
        ("F2_missing_package", "bleu.py could not be imported: ModuleNotFoundError: No module named 'tensorflow'"),
        ("F2_wrong_file_name", "bleu.py is missing from the submission"),
    ],
    ids=["F2_missing_package", "F2_wrong_file_name"],
)
def test_F2_environment_mismatch_is_named(row, message, tmp_path):
    graded = run_grade(build(row, tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.total("bleu")[0] == 0
    assert {r.output for r in graded.results()} == {message}


def test_F3_missing_function_and_wrong_signature(tmp_path):
    graded = run_grade(build("F3_missing_function", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert passed(graded, FIRST)
    assert graded.result(CLIPPED).output.startswith("your code raised TypeError: clipped_counts() takes 2")
    for name in CORPUS:
        assert graded.result(name).output.startswith(
            "your code raised AttributeError: module 'bleu' has no attribute 'corpus_bleu'"
        ), name
    assert graded.total("bleu") == points("bleu", CLIPPED, *CALLS_CORPUS_BLEU)


def test_F4_exception_message_shows_in_public_checks_only(tmp_path):
    with public_and(UNCHANGED):
        graded = run_grade(build("F4_exception_with_inputs", tmp_path / "sub"), ("bleu",), public_only=False)
    assert_contained(graded, within=BOUND)
    public = graded.result(WORKED).output
    assert public.startswith("your code raised ValueError: LEAK<<"), public  # a public case: all shown
    assert 'File "bleu.py", line' in public and "Traceback" not in public
    assert not re.search(r"autograder|worker\.py|recipes|/tmp/", public), public  # the student's frames only
    assert len(public) <= 4000
    # hidden: that it raised, no kind, no line and no inputs (A52, A58)
    assert graded.result(UNCHANGED).output == "your code raised an exception"
    for name in SENDS_THE_CAT:
        assert graded.result(name).output.startswith("your code raised ValueError: LEAK<<"), name
    assert graded.total("bleu") == points("bleu", *SENDS_THE_CAT, UNCHANGED, hidden=(UNCHANGED,))


def test_F5_wrong_return_types_are_named(tmp_path):
    graded = run_grade(build("F5_wrong_return_type", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert "ngram_counts: expected a collections.Counter, got dict" in graded.result(FIRST).output
    for name in CORPUS:
        assert "corpus_bleu: expected a list of" in graded.result(name).output
        assert "got tuple" in graded.result(name).output
    assert graded.total("bleu") == points("bleu", FIRST, *CALLS_CORPUS_BLEU)


def test_F6_a_shape_that_broadcasts_is_caught_before_values(tmp_path):
    graded = run_grade(build("F6_shape_that_broadcasts", tmp_path / "sub"), ("attention",))
    assert_contained(graded, within=BOUND)
    out = graded.result(PARITY).output
    assert re.match(r"context: expected shape \(\d+, \d+\), got \(1, \d+, \d+\)", out), out
    got, out_of = graded.total("attention")
    assert got < out_of


def test_F7_non_finite_scores_fail(tmp_path):
    graded = run_grade(build("F7_nan_outputs", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    for name in CORPUS:
        assert re.search(r"BLEU-1 is nan, expected a finite number", graded.result(name).output), name
    assert graded.total("bleu") == points("bleu", *CALLS_CORPUS_BLEU)


def test_F8_slow_code_times_out_one_check_only(tmp_path, monkeypatch):
    short_call_timeout(monkeypatch)
    graded = run_grade(build("F8_slow_code", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND + CALL_TIMEOUT)
    assert graded.result(WORKED).output == f"timed out after {CALL_TIMEOUT:.0f} s"
    assert graded.total("bleu") == points("bleu", WORKED)


def test_F8_part_time_limit_also_bounds_worker_restarts(tmp_path, monkeypatch):
    starts = []
    real_start = client.Worker._start

    def counting_start(self):
        starts.append(time.monotonic())
        return real_start(self)

    monkeypatch.setattr(client.Worker, "_start", counting_start)
    # reached while the first worker starts (it never ends)
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, part=0.5))
    graded = run_grade(build("F15_heavy_import", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert all(r.output == "the part's time limit was reached" for r in graded.results()), graded.describe()
    assert len(starts) == 1, f"{len(starts)} workers started for a part whose time was up during the first start"


def test_F9_infinite_loop_ignoring_signals_is_killed(tmp_path, monkeypatch):
    short_call_timeout(monkeypatch)
    graded = run_grade(build("F9_infinite_loop", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND + CALL_TIMEOUT)
    assert graded.result(WORKED).output == f"timed out after {CALL_TIMEOUT:.0f} s"
    assert graded.total("bleu") == points("bleu", WORKED)
    assert graded.full_marks("decoding"), graded.describe()


@pytest.fixture(scope="module")
def f10(tmp_path_factory):
    """F10 graded once, with replies capped at 4 MiB (the real cap, 16 MiB, is the same check at a size a CI
    machine should not be asked to move)."""
    folder = build("F10_memory_blowup", tmp_path_factory.mktemp("F10") / "sub", also=("decoding",))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(protocol, "MAX_MESSAGE", 4 * 2**20)
        try:
            return run_grade(folder, ("bleu", "decoding"))
        finally:  # swept with the sandbox user's files; removed here too where there is no sandbox user
            for path in Path("/dev/shm").glob("captionkit-hostile-F10-*"):
                path.unlink(missing_ok=True)


@pytest.mark.caps
def test_F10_memory_blowup_and_oversized_result(f10):
    assert_contained(f10, within=2 * BOUND)
    assert f10.result(FIRST).output == "sent an unreadable reply (MessageTooLarge)"
    assert f10.result(CLIPPED).output.startswith("your code raised MemoryError: PROBE")  # 20 GB under RLIMIT_AS
    assert passed(f10, *CORPUS)
    assert f10.total("bleu") == points("bleu", FIRST, CLIPPED)
    assert f10.full_marks("decoding"), f10.describe()


@pytest.mark.caps
@pytest.mark.xfail(
    not detect().private_tmp and not landlock.abi(),
    strict=True,
    reason="no mount namespace here (no "
    "CAP_SYS_ADMIN, or not root) and no Landlock, so the worker writes in the machine's /dev/shm: files "
    "are capped one by one and counted by the memory watchdog (docs/security.md, F10)",
)
def test_F10_files_in_shared_memory_are_capped(f10):
    shm_bytes = f10.probe(CLIPPED)["shm_bytes"]
    assert shm_bytes <= 4 * Limits().file_bytes, f"the worker wrote {shm_bytes >> 20} MiB to /dev/shm"


def test_F11_output_flood_is_capped_and_the_part_still_graded(tmp_path, tmp_public):
    scratch = tmp_public / "grade"
    graded = run_grade(build("F11_output_flood", tmp_path / "sub"), ("bleu",), scratch=scratch)
    assert_contained(graded, within=BOUND)
    assert graded.full_marks("bleu"), graded.describe()
    printed = (scratch / "bleu" / "output.txt").stat().st_size
    assert printed <= Limits().file_bytes, f"{printed} bytes of output kept"
    assert all(len(r.output) < 100 for r in graded.results())  # "passed": nothing printed


def test_F12_hard_crashes_are_reported_and_the_rest_graded(tmp_path):
    graded = run_grade(build("F12_hard_crash", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    assert graded.result(FIRST).output == "the worker was killed by SIGABRT"
    assert graded.result(CLIPPED).output == "the worker was killed by SIGSEGV"
    assert passed(graded, *CORPUS)
    assert graded.full_marks("decoding"), graded.describe()


def test_F13_input_mutation_cannot_reach_the_grader(tmp_path):
    with public_and(UNCHANGED):
        graded = run_grade(build("F13_input_mutation", tmp_path / "sub"), ("bleu",), public_only=False)
    assert_contained(graded, within=BOUND)
    assert passed(graded, *CORPUS)  # the grader's copies of the inputs were not emptied
    assert graded.result(UNCHANGED).output.startswith(
        "failed: corpus_bleu, clipped_counts and ngram_counts do not modify the captions"
    )
    assert graded.total("bleu") == points("bleu", UNCHANGED, hidden=(UNCHANGED,))


@pytest.fixture(scope="module")
def f14(tmp_path_factory):
    folder = build("F14_nondeterminism", tmp_path_factory.mktemp("F14") / "sub")
    return run_grade(folder, ("bleu",)), run_grade(folder, ("bleu",))


def test_F14_regrades_agree_and_torch_is_seeded(f14):
    first, again = f14
    for graded in f14:
        assert_contained(graded, within=BOUND)
    assert [r.score for r in first.results()] == [r.score for r in again.results()]
    assert first.probe(FIRST)["torch"] == again.probe(FIRST)["torch"]


def test_F14_python_and_numpy_randomness_is_seeded(f14):
    first, again = f14
    assert first.probe(FIRST)["random"] == again.probe(FIRST)["random"]
    assert first.probe(FIRST)["numpy"] == again.probe(FIRST)["numpy"]
    assert [r.output for r in first.results()] == [r.output for r in again.results()]


@pytest.fixture(scope="module")
def f15(tmp_path_factory):
    folder = build("F15_heavy_import", tmp_path_factory.mktemp("F15") / "sub", also=("decoding",))
    real_start = client.Worker._start

    def start(self):  # a short start-up limit for the hostile part only
        limits.LIMITS = dataclasses.replace(limits.LIMITS, startup=STARTUP_TIMEOUT if self.module == "bleu" else 60.0)
        return real_start(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(limits, "LIMITS", limits.LIMITS)  # restored afterwards
        mp.setattr(client.Worker, "_start", start)
        return run_grade(folder, ("bleu", "decoding"))


def test_F15_an_import_that_never_ends_costs_only_its_part(f15):
    assert_contained(f15, within=2 * BOUND + STARTUP_TIMEOUT)
    for r in f15.results("bleu"):
        assert r.output == "the worker did not start in time", r.output  # no path of the grader
    assert f15.total("bleu")[0] == 0
    assert f15.full_marks("decoding"), f15.describe()


# =========================================================================== attacks


def test_A1_writes_to_results_and_grader_files_fail(tmp_path, private):
    user_switch("A1 (writing where only root may)")
    results = private / "results" / "results.json"
    folder = build("A1_write_results", tmp_path / "sub", also=("decoding",), PRIVATE=private, REPO=ROOT)
    graded = run_grade(folder, ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    attempts = graded.probe(FIRST)
    denied = {k: v for k, v in attempts.items() if k != "tmp"}
    assert all(v in ("PermissionError", "FileNotFoundError") for v in denied.values()), attempts
    assert attempts["results"] == "PermissionError" and attempts["repo_autograder"] == "PermissionError"
    # /tmp is world-writable: with Landlock the worker has no right there (A53), else what it writes is swept
    assert attempts["tmp"] == ("PermissionError" if landlock.abi() else "ok"), attempts
    assert not Path("/tmp/captionkit-hostile-A1-results.json").exists()
    assert (private / "sentinel.txt").read_text() == "sentinel" and not results.exists()
    assert not (ROOT / "autograder" / "hostile-A1.json").exists()
    assert not (ROOT / "autograder" / "grader" / "hidden" / "hostile-A1.json").exists()
    assert graded.total("bleu") == points("bleu", FIRST) and graded.full_marks("decoding"), graded.describe()
    write_json_atomic(gradescope_results(graded.report), results)  # the grader writes last, after the sweep
    bleu_score, decoding_score = points("bleu", FIRST)[0], points("decoding")[0]
    assert json.loads(results.read_text())["score"] == graded.report.score == bleu_score + decoding_score


def test_A2_printed_scores_count_for_nothing(tmp_path):
    graded = run_grade(build("A2_fake_score", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.report.score == 0
    assert all("NotImplementedError" in r.output for r in graded.results()), graded.describe()
    assert "HOSTILE-A2" not in json.dumps(gradescope_results(graded.report))


def _first_lines(graded) -> set[str]:
    """Each check's output without its case ([...]), worker detail ((Channel...)) or traceback."""
    return {re.sub(r" \(Channel\w+\)$| \[.*\]$", "", r.output.split("\n")[0]) for r in graded.results()}


@pytest.mark.parametrize(
    "row, expected",
    [
        ("A3_exit_at_import", {"bleu.py could not be imported: SystemExit: 0"}),
        ("A3_hard_exit_at_import", {"the worker did not start"}),
    ],
    ids=["A3_exit_at_import", "A3_hard_exit_at_import"],
)
def test_A3_exiting_at_import_earns_nothing(row, expected, tmp_path):
    graded = run_grade(build(row, tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.report.score == 0
    assert _first_lines(graded) == expected, graded.describe()


@pytest.fixture(scope="module")
def a3(tmp_path_factory):
    return run_grade(build("A3_exit_in_function", tmp_path_factory.mktemp("A3") / "sub"), ("bleu",))


EXITED = "the worker exited with status 0 (the student's code ended the process)"


def test_A3_exiting_in_a_function_earns_nothing(a3):
    assert_contained(a3, within=BOUND)
    assert a3.report.score == 0
    assert _first_lines(a3) <= {"your code raised SystemExit: 0", EXITED, GRADER_ERROR}, a3.describe()
    assert a3.result(FIRST).output.startswith("your code raised SystemExit: 0")
    assert a3.result(CLIPPED).output == a3.result(WORKED).output == EXITED


def test_A3_a_crash_inside_a_property_is_reported_as_the_student_s(a3):
    assert GRADER_ERROR not in _first_lines(a3), a3.describe()


def test_A4_test_framework_exceptions_just_fail_the_check(tmp_path):
    graded = run_grade(build("A4_test_outcome_manipulation", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.result(FIRST).output.startswith("your code raised BaseException: HOSTILE-A4")
    assert graded.result(CLIPPED).output.startswith("your code raised KeyboardInterrupt")
    for name in CORPUS:
        assert graded.result(name).output.startswith("your code raised Exception"), name
    assert graded.report.score == 0  # and this pytest session carries on


def test_A5_A19_A20_only_the_visible_module_is_staged(tmp_path, tmp_public):
    folder = build("A5_shadow_modules_and_forged_pyc", tmp_path / "sub")
    reference = tmp_path / "reference" / "bleu.py"  # the forged .pyc: the reference, compiled
    reference.parent.mkdir()
    shutil.copyfile(ROOT / "solutions" / "bleu.py", reference)
    py_compile.compile(
        str(reference),
        cfile=str(folder / "__pycache__" / f"bleu.{sys.implementation.cache_tag}.pyc"),
        dfile="bleu.py",
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    scratch = tmp_public / "grade"
    graded = run_grade(folder, ("bleu",), scratch=scratch)
    assert_contained(graded, within=BOUND)
    assert graded.report.score == 0
    assert all("NotImplementedError" in r.output for r in graded.results()), graded.describe()
    assert sorted(os.listdir(scratch / "bleu" / "staging")) == ["bleu.py"]
    assert "HOSTILE-A5" not in (scratch / "bleu" / "output.txt").read_text(errors="replace")
    assert not any("HOSTILE-A5" in r.output for r in graded.results())


def test_A6_patched_comparisons_change_nothing(tmp_path):
    graded = run_grade(build("A6_patch_the_comparisons", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    for name in CORPUS:
        assert re.search(r"BLEU-\d is 0\.5, expected", graded.result(name).output), graded.result(name).output
    assert graded.total("bleu") == points("bleu", *CALLS_CORPUS_BLEU)


def test_A7_introspection_finds_nothing_of_the_grader(tmp_path):
    folder = build("A7_introspection", tmp_path / "sub", SEED_REVERSED=str(hidden_seed())[::-1])
    graded = run_grade(folder, ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert found["seed"] == 0 and found["solution_text"] == 0 and found["frame_names"] == [], found
    assert found["modules"] == ["solutions"], found  # the empty in-memory package: no reference for Part 3


@pytest.fixture(scope="module")
def a7_later_part(tmp_path_factory):
    return run_grade(
        build("A7_introspection_attention", tmp_path_factory.mktemp("A7") / "sub"), ("attention",), public_only=False
    )


def test_A7_introspection_in_a_later_part_finds_no_reference_source(a7_later_part):
    assert_contained(a7_later_part, within=BOUND)
    assert a7_later_part.probe(PARITY)["solution_text"] == {}, a7_later_part.probe(PARITY)


TRAINED_ATTENTION = "trained_soft_attention_reaches_the_threshold"


def test_A7_a_public_check_s_worker_holds_no_reference_module(a7_later_part):
    """Part 4's training check uses Parts 1 and 2's references; they reach only the workers of its hidden checks,
    whose feedback is shown after the due date and names no more than the exception's kind and the student's line."""
    assert a7_later_part.probe(PARITY)["modules"] == [], a7_later_part.probe(PARITY)
    trained = a7_later_part.result(TRAINED_ATTENTION)
    start = trained.staff_note.find("PROBE")  # the staff's view: the hidden check's worker does hold them
    assert start >= 0, trained.staff_note[:500]
    held = json.JSONDecoder().raw_decode(trained.staff_note, start + len("PROBE"))[0]["modules"]
    assert held == ["solutions.decoding", "solutions.show_and_tell"], held
    for r in a7_later_part.report.results:
        if r.visibility == "hidden":
            assert "PROBE" not in r.output and "solutions" not in r.output, (r.name, r.output)


def test_A7_a_hidden_check_s_worker_cannot_show_what_it_holds(tmp_path):
    """Where the references are (the hidden checks' workers), a module that fails to import with what it found in
    the message, or a worker that ends with a status or a signal of its choosing, shows the student no more than
    that: the message, the status and the signal go to the staff only."""
    failing = run_grade(build("A7_hidden_import_fails", tmp_path / "import"), ("lstm_a",), public_only=False)
    ending = run_grade(build("A7_hidden_worker_signals", tmp_path / "exit"), ("lstm_a",), public_only=False)
    for graded in (failing, ending):
        assert_contained(graded, within=BOUND)
        assert all(r.passed for r in graded.report.results if r.visibility == "public"), graded.describe()
    staff = {
        "import": "\n".join(r.staff_note for r in failing.report.results if r.visibility == "hidden"),
        "exit": "\n".join(r.staff_note for r in ending.report.results if r.visibility == "hidden"),
    }
    assert "LEAKsolutions.decoding,solutions.show_and_tell" in staff["import"], staff["import"][:1000]
    assert "status 77" in staff["exit"] and "SIGUSR2" in staff["exit"], staff["exit"][:1000]
    for graded in (failing, ending):
        for r in graded.report.results:
            if r.visibility == "hidden":
                assert not any(leak in r.output for leak in ("LEAK", "solutions", "77", "SIGUSR2")), (r.name, r.output)
    assert not any(r.passed for r in failing.report.results if r.visibility == "hidden"), failing.describe()
    assert {r.output for r in failing.report.results if r.visibility == "hidden"} == {
        "lstm_a.py could not be imported"
    }, failing.describe()


def test_A8_lying_objects_are_graded_by_their_values(tmp_path):
    graded = run_grade(build("A8_lying_objects", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert "expected a collections.Counter, got dict" in graded.result(FIRST).output
    assert graded.result(CLIPPED).output.startswith("clipped_counts: total 0, but the candidate has 7")
    for name in CORPUS:
        assert re.search(r"BLEU-\d is 0, expected", graded.result(name).output), graded.result(name).output
    assert graded.report.score == 0


def test_A9_a_tensor_subclass_arrives_as_a_plain_tensor(tmp_path):
    """A message carries a tensor's dtype, shape and bytes, never its class: the grader compares a plain tensor, and
    the lying subclass earns nothing (tests/worker/test_protocol.py shows the lie gone on arrival)."""
    graded = run_grade(build("A9_tensor_subclass", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    first = graded.result(FIRST)
    assert not first.passed and first.output.startswith("ngram_counts: expected"), first.output
    assert graded.total("bleu") == points("bleu", FIRST)


def test_A38_a_fake_torch_in_sys_modules_costs_only_its_own_part(tmp_path):
    """Part 3's worker imports no torch and asks sys.modules whether anything has: a module registered as torch by the
    student's code reaches the worker's seeding and its replies, and so fails every call of its own part, nothing
    else."""
    graded = run_grade(build("A38_fake_torch", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    assert "seeding refused" in graded.result(FIRST).output, graded.result(FIRST).output
    assert graded.total("bleu")[0] == 0
    assert graded.full_marks("decoding")


def test_A10_hidden_files_are_unreadable(tmp_path):
    user_switch("A10 (reading root-only files)")
    graded = run_grade(build("A10_read_hidden_files", tmp_path / "sub", REPO=ROOT), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    readable = {k: v for k, v in found.items() if v == "read" or v.startswith(("listed", "imported"))}
    assert not readable, found
    assert found["solutions"] == found["seed"] == found["checks"] == "PermissionError", found


def test_A10_hidden_seed_cannot_be_read_off_shared_file_names(tmp_path, tmp_public, monkeypatch):
    encoder = importlib.import_module("shared.encoder")
    training_checks = importlib.import_module("autograder.grader.training")

    def scenes(n, seed, max_objects=2, keep_images=True):  # the data's shape without drawing 6400 scenes
        return SimpleNamespace(
            images=torch.zeros(n, 1),
            attributes=torch.zeros(n, 7),
            tokens=torch.zeros(n, 2),
            targets=["a red circle"] * n,
            objects=[[] for _ in range(n)],
        )

    monkeypatch.setenv("CAPTIONKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(encoder, "make_scenes", scenes)
    monkeypatch.setattr(encoder, "pretrain_encoder", lambda s, n: (None, SimpleNamespace(cpu_seconds=0.0)))
    monkeypatch.setattr(
        encoder, "encode_scenes", lambda net, images: (torch.zeros(len(images), 1, 1), torch.zeros(len(images), 7))
    )
    scratch = tmp_public / "grade"
    ctx = GradingContext(scratch=scratch / "grader", shared=scratch / "shared")
    training_checks.share_split(ctx)  # what a training check of Part 1 leaves there
    graded = run_grade(build("A10_seed_from_shared_names", tmp_path / "sub"), ("bleu",), scratch=scratch, ctx=ctx)
    names = graded.probe(FIRST)["shared"]

    def digest(seed: int, threads: int) -> str:  # the attacker's side: shared/encoder.py is public
        key = json.dumps(
            dict(
                v=1,
                train_seed=seed,
                test_seed=seed + 1,
                n_train=6000,
                n_test=400,
                max_objects=2,
                torch=torch.__version__,
                threads=threads,
            ),
            sort_keys=True,
        )
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    revealing = {f"grids-{digest(hidden_seed(), t)}.pt" for t in range(1, 65)} & set(names)
    assert not revealing, f"the worker listed {sorted(names)}; {sorted(revealing)} is a hash of the hidden seed"


def test_A11_the_worker_sees_no_grader_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPTIONKIT_HIDDEN_SEED", str(hidden_seed()))
    monkeypatch.setenv("CAPTIONKIT_GRADER_TOKEN", "hostile-A11-token")
    graded = run_grade(build("A11_grader_environment", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert set(found["env"]) <= harness.WORKER_ENVIRONMENT, found["env"]
    assert "hostile-A11-token" not in graded.result(FIRST).output
    assert len(found["fds"]) <= 6 and set(found["fds"]) <= {"null", "output.txt", "pipe"}, found["fds"]
    if detect().mode == "user":
        assert found["parent_environ"] == found["init_environ"] == found["parent_mem"] == "PermissionError", found


@pytest.mark.caps
def test_A13_no_network(tmp_path):
    if not confine.available():
        network_namespace("A13 (network access) without a seccomp filter")
    graded = run_grade(build("A13_network", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert found["interfaces"] in (["lo"], "PermissionError"), found
    assert found["tcp"] != "ok" and found["udp"] != "ok" and found["dns"] != "ok", found


def test_A14_pickled_payloads_never_run_in_the_grader(tmp_path, private):
    graded = run_grade(build("A14_malicious_reduce", tmp_path / "sub", PRIVATE=private), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert not (private / "A14-executed").exists()
    refused = "sent an unreadable reply (UnpicklingError)"  # refused by the parent's safe loader
    # An exception object never crosses: the worker formats it (type as its nearest built-in) into plain text.
    assert graded.result(CLIPPED).output.startswith("your code raised Exception: HOSTILE-A14")
    ngram = graded.result(FIRST).output  # or made a plain str by the worker
    assert ngram == refused or ngram.startswith("ngram_counts: "), ngram
    assert graded.total("bleu") == points("bleu", FIRST, CLIPPED)


def test_A15_timeout_evasion_is_killed_from_outside(tmp_path, monkeypatch):
    short_call_timeout(monkeypatch)
    graded = run_grade(build("A15_timeout_evasion", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND + CALL_TIMEOUT)
    assert graded.result(WORKED).output == f"timed out after {CALL_TIMEOUT:.0f} s"
    assert graded.total("bleu") == points("bleu", WORKED), graded.describe()  # the next check got a fresh worker


A22_REFUSED = (
    "your code raised ForbiddenOpError: F.scaled_dot_product_attention is the reference this check compares against"
)


@pytest.mark.parametrize(
    "row, message",
    [
        pytest.param("A22_banned_reference_op", A22_REFUSED, id="A22_banned_reference_op"),
        pytest.param(
            "A22_banned_op_alias",
            "your code raised ForbiddenOpError: your module holds the reference this check compares against",
            id="A22_banned_op_alias",
        ),
        pytest.param("A22_banned_op_in_a_container", A22_REFUSED, id="A22_banned_op_in_a_container"),
        pytest.param("A22_banned_op_through_torch_ops", A22_REFUSED, id="A22_banned_op_through_torch_ops"),
        pytest.param(
            "A22_banned_op_with_torch_functions_disabled",
            "your code raised ForbiddenOpError: your module's "
            "source uses F.scaled_dot_product_attention or the grader's ban of it (line ",  # names the line
            id="A22_banned_op_with_torch_functions_disabled",
        ),
    ],
)
def test_A22_the_banned_reference_op_earns_no_parity_points(row, message, tmp_path):
    graded = run_grade(build(row, tmp_path / "sub"), ("attention",))
    assert_contained(graded, within=BOUND)
    parity = graded.result(PARITY)
    assert not parity.passed, f"{row}: parity passed with the reference op itself"
    assert message is None or parity.output.startswith(message), parity.output


@pytest.fixture(scope="module")
def a24(tmp_path_factory):
    folder = build("A24_feedback_leak", tmp_path_factory.mktemp("A24") / "sub")
    with public_and(UNCHANGED):
        return run_grade(folder, ("bleu",), public_only=False)


def test_A24_hidden_checks_show_no_exception_message(a24):
    assert a24.seconds <= BOUND and not a24.live_after and not a24.changed
    out = a24.result(UNCHANGED).output
    assert out.startswith("your code raised ") and "MESSAGE<<" not in out, out
    assert a24.total("bleu") == points("bleu", UNCHANGED, hidden=(UNCHANGED,))


def test_A24_hidden_checks_show_no_inputs_in_the_type_name(a24):
    assert_contained(a24, within=BOUND)
    assert "LEAK<<" not in a24.result(UNCHANGED).output, a24.result(UNCHANGED).output


@pytest.fixture(scope="module")
def a25(tmp_path_factory):
    return run_grade(build("A25_staff_artifact_injection", tmp_path_factory.mktemp("A25") / "sub"), ("bleu",))


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def test_A25_exception_messages_are_capped_in_feedback(a25):
    assert a25.seconds <= BOUND and not a25.live_after and not a25.changed
    out = a25.result(FIRST).output
    assert out.startswith("your code raised ValueError: =HYPERLINK(") and len(out) <= 4000, len(out)


def test_A25_feedback_is_small_and_plain(a25):
    for r in a25.results():
        assert len(r.output) <= 4000 and not CONTROL.search(r.output), (r.name, len(r.output))
    assert len(json.dumps(gradescope_results(a25.report))) < 2**20


def test_A25_grades_csv_cells_are_inert(tmp_path):
    hostile = '=HYPERLINK("http://example.invalid","x")'
    rows = [
        {
            "id": hostile,
            "name": "@SUM(1+1)*cmd|' /C calc'!A0",
            "bleu": 3.0,
            "total": 3.0,
            "status": "-2+3\x1b[2J\x00" + "x" * 10_000,
        },
        {"id": "\t=1+1", "name": "+cmd", "status": "\r=1+1"},
    ]
    path = tmp_path / "grades.csv"
    grades_table.write_csv(rows, path)
    with open(path, newline="") as f:
        cells = [cell for row in list(csv.reader(f))[1:] for cell in row]
    for cell in cells:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert not CONTROL.search(cell) and len(cell) <= 201, cell[:80]


def test_A21_a_symlinked_module_is_refused(tmp_path):
    folder = build("A21_symlink_module", tmp_path / "sub")
    assert (folder / "bleu.py").is_symlink()
    graded = run_grade(folder, ("bleu",))
    assert_contained(graded, within=BOUND)
    assert {r.output for r in graded.results()} == {"bleu.py is a symbolic link; submit the file itself"}
    assert graded.report.score == 0


def test_A18_another_submission_graded_alongside_is_unreadable(tmp_path, tmp_public):
    user_switch("A18 (another submission's files, which the grader's own user owns)")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text() + "\n# HOSTILE-VICTIM-MARKER\n")
    victim_scratch = tmp_public / "captionkit-grade-victim"
    run_grade(victim, ("bleu",), scratch=victim_scratch)  # its staging stays: as mid-run in another grader
    graded = run_grade(build("A18_read_other_submissions", tmp_path / "sub", VICTIM=victim_scratch), ("bleu",))
    assert_contained(graded, within=BOUND)
    assert graded.probe(FIRST)["read"] == "PermissionError", graded.probe(FIRST)


@pytest.fixture(scope="module")
def a18(tmp_path_factory):
    user_switch("A18 (damage outside the worker's own folder)")
    uid = harness.sandbox_uid()
    with public_tmp("captionkit-hostile-A18-") as tmp:
        private = harness.private_dir(tmp / "private")
        folder = build(
            "A18_damage_and_leftovers",
            tmp_path_factory.mktemp("A18") / "sub",
            also=("decoding",),
            PRIVATE=private,
            REPO=ROOT,
        )
        try:
            graded = run_grade(folder, ("bleu", "decoding"))
            yield graded, private, uid
        finally:
            _remove_leftovers(uid)


LEFTOVER = "captionkit-hostile-A18"


def _ipc_objects(uid: int) -> dict[str, list[int]]:
    """System V shared memory segments and message queues owned by `uid` (column 8 of /proc/sysvipc/*)."""
    found = {}
    for kind in ("shm", "msg"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            lines = []
        found[kind] = [int(f[1]) for f in (line.split() for line in lines) if len(f) > 7 and int(f[7]) == uid]
    return found


def _remove_leftovers(uid: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ipc = _ipc_objects(uid)
    for shmid in ipc["shm"]:
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    for msqid in ipc["msg"]:
        libc.msgctl(msqid, 0, None)
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        path = Path(folder) / LEFTOVER
        if path.exists() and path.stat().st_uid == uid:
            path.unlink()


@pytest.mark.caps
@pytest.mark.xdist_group("hostile-a18")  # one grade of A18: two would see each other's leftovers
def test_A18_damage_is_refused_and_temp_files_swept(a18):
    graded, private, _ = a18
    assert_contained(graded, within=2 * BOUND)
    found = graded.probe(FIRST)
    for key in ("rm_staged", "chmod_staging", "rm_runtime", "sentinel", "kit", "venv"):
        assert found[key] == "PermissionError", (key, found)
    assert found["own_work"] == "ok"  # its own scratch is its own
    assert (private / "sentinel.txt").read_text() == "sentinel"
    # With Landlock the worker has no right in the shared temporary folders (A53), nor in /dev/shm unless it is a
    # private tmpfs of its own (A61)
    shared = "PermissionError" if landlock.abi() else "ok"
    memory = "ok" if detect().private_tmp or not landlock.abi() else "PermissionError"
    for folder, outcome in (("/tmp", shared), ("/var/tmp", shared), ("/dev/shm", memory)):
        assert found[folder] == outcome and not (Path(folder) / LEFTOVER).exists(), (folder, found[folder])
    assert graded.total("bleu") == points("bleu", FIRST) and graded.full_marks("decoding"), graded.describe()


@pytest.mark.caps
@pytest.mark.xdist_group("hostile-a18")  # one grade of A18: two would see each other's leftovers
def test_A18_nothing_is_left_for_the_next_submission(a18):
    graded, _, uid = a18
    found = graded.probe(FIRST)
    # Made, or refused by the worker's seccomp filter (System V IPC creation), and the lock file made.
    assert found["/run/lock"] == ("PermissionError" if landlock.abi() else "ok"), found
    left = {"ipc": _ipc_objects(uid), "/run/lock": (Path("/run/lock") / LEFTOVER).exists()}
    assert left == {"ipc": {"shm": [], "msg": []}, "/run/lock": False}, left


def test_A16_leftover_daemon_thread_and_atexit_are_stopped(tmp_path, tmp_public, monkeypatch):
    user_switch("A16 (the sweep of the sandbox user's processes)")
    drop = harness.drop_dir(tmp_public)
    monkeypatch.setenv("CAPTIONKIT_WORKER_DROP", str(drop))  # Landlock: the worker writes under /tmp nowhere else
    graded = run_grade(
        build("A16_leftover_processes", tmp_path / "sub", also=("decoding",), DROP=drop), ("bleu", "decoding")
    )
    assert_contained(graded, within=2 * BOUND)
    assert graded.full_marks("bleu") and graded.full_marks("decoding"), graded.describe()
    assert (drop / "daemon-started").exists() and (drop / "thread-beat").exists(), "nothing ran: nothing tested"
    beats = {name: (drop / name).read_text() for name in ("daemon-beat", "thread-beat")}
    time.sleep(1.5)
    assert {name: (drop / name).read_text() for name in beats} == beats, "code still runs after grading"
    assert not (drop / "atexit-ran").exists()


@pytest.mark.caps
def test_A17_fork_bomb_hits_the_process_limit(tmp_path):
    user_switch("A17 (RLIMIT_NPROC, which Linux does not enforce for root)")
    graded = run_grade(build("A17_fork_bomb", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    first = graded.result(FIRST).output
    # Stopped by the process limit, or, where the grader cannot read the processes' proportional set sizes
    # (Docker's default capabilities: no CAP_SYS_PTRACE), by the memory watchdog counting their resident pages.
    if not first.startswith("the worker's processes used "):
        assert 0 < graded.probe(FIRST)["forked"] < Limits().processes
    assert graded.total("bleu") == points("bleu", FIRST) and graded.full_marks("decoding"), graded.describe()
