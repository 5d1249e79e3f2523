"""Hostile submissions against the grader's trust in its worker and its own secrets (docs/security.md, rows
A26-A34 and the hidden data rows of A10): forged and malformed messages, a worker that stops reading, hidden
inputs kept for a later public check, rules the student's module can switch off, the BLEU oracles, a TA's batch,
values that size the grader's allocations, the worker's privileges, and what the hidden test split follows from.

Each test grades with the real grader (harness.run_grade) and asserts the row's outcome and, where it grades, what
every row keeps (harness.assert_contained).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from autograder.__main__ import main as kit
from autograder.grader import batch, batch_results, grades_table
from autograder.grader.context import GradingContext, hidden_seed, hidden_test_secret
from autograder.grader.intake import Submission
from autograder.grader.isolation import detect, unprivileged
from autograder.grader.results import was_graded
from autograder.public import limits
from autograder.public.client.replies import describe_exit
from autograder.worker import landlock
from shared.scenes import make_scenes
from tests.hostile import harness
from tests.hostile.harness import ROOT, assert_contained, build, run_grade
from tests.hostile.test_hostile import (
    BOUND,
    CALL_TIMEOUT,
    FIRST,
    PARITY,
    UNCHANGED,
    public_and,
    public_tmp,
    user_switch,
)

GRADER_ERROR = "the grader could not run this check (an error on the grader's side; tell the course staff)"
HIDDEN_BLEU_INPUT = "a red circle above a red square"  # a hidden bleu check's hypothesis (A24, A29)


@pytest.fixture(autouse=True, scope="module")
def adopt_orphans():
    harness.set_subreaper(True)
    yield
    harness.set_subreaper(False)
    harness.reap_orphans()


@pytest.fixture
def short_calls(monkeypatch):
    """Per-call limit of CALL_TIMEOUT seconds for the bleu checks and a check limit of 8 s for every check."""
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, bleu_call=CALL_TIMEOUT))
    importlib.import_module("autograder.grader.checks").all_checks()  # every check registered
    checks = importlib.import_module("autograder.public.checks")
    for part, part_checks in checks._REGISTRY.items():
        shortened = [c if c.training else dataclasses.replace(c, timeout=8.0) for c in part_checks]
        monkeypatch.setitem(checks._REGISTRY, part, shortened)


# -- A26: forged and malformed messages -------------------------------------------------------------------------


def test_A26_a_forged_start_up_message_costs_only_its_part(tmp_path):
    graded = run_grade(build("A26_forged_start_up", tmp_path / "sub", also=("decoding",)), ("bleu", "decoding"))
    assert_contained(graded, within=2 * BOUND)
    assert graded.total("bleu")[0] == 0
    assert graded.full_marks("decoding"), graded.describe()
    for r in graded.results("bleu"):
        assert r.output.startswith("the worker sent a malformed start-up message"), r.output


def test_A26_a_malformed_reply_is_the_student_s_failure(tmp_path):
    graded = run_grade(build("A26_malformed_reply", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    first = graded.result(FIRST)
    assert not first.passed and first.output == "sent a malformed reply", first.output


def test_A62_a_reply_forged_on_the_worker_s_pipe_is_the_student_s_failure(tmp_path):
    """A reply written on the reply pipe by the student's code itself, before the recipe's own, would put every later
    reply one request late (before: a clipped_counts check read an ngram_counts reply and failed as the grader's own
    error). Each reply names the request it answers: the forged one is refused as the worker's malformed reply."""
    graded = run_grade(build("A62_forged_reply", tmp_path / "sub"), ("bleu",), public_only=False)
    assert_contained(graded, within=BOUND)
    assert not any(r.output == GRADER_ERROR for r in graded.results()), graded.describe()
    clipped = graded.result("clipped_counts_clip_at_the_most_in_one_reference")
    assert not clipped.passed and clipped.output == "sent a malformed reply", clipped.output


# -- A27: a worker that stops reading ---------------------------------------------------------------------------


def test_A27_writes_to_a_worker_that_stops_reading_have_a_deadline(tmp_path, short_calls):
    graded = run_grade(build("A27_request_pipe_shrunk", tmp_path / "sub"), ("attention",))
    # The worker sleeps 150 s once its request pipe is full; the check's limit is 8 s. A grader that waited on the
    # full pipe would take the whole sleep; one that keeps its deadlines takes seconds (about 20 on an idle machine),
    # and the bound leaves room for a loaded one.
    assert graded.seconds < 100, f"grading took {graded.seconds:.1f} s: the grader waited on a full pipe"
    assert_contained(graded, within=BOUND)


# -- A28: hidden inputs kept for a later public check -----------------------------------------------------------


def test_A28_public_feedback_does_not_depend_on_the_hidden_checks(tmp_path):
    folder = build("A28_hidden_inputs_kept_for_public", tmp_path / "sub")
    everything = run_grade(folder, ("decoding",), public_only=False)
    public = run_grade(folder, ("decoding",), public_only=True)
    assert_contained(everything, within=2 * BOUND)
    probe = "sampling_follows_the_tempered_distribution"
    seen, seen_by_public = everything.probe(probe)["seen"], public.probe(probe)["seen"]
    assert seen == seen_by_public, f"a public check saw {seen - seen_by_public} toy models of hidden checks"
    assert {r.name: r.output for r in everything.results() if r.visibility == "public"} == {
        r.name: r.output for r in public.results()
    }


# -- A29: rules enforced inside the worker ----------------------------------------------------------------------


def test_A29_emptying_the_ban_tables_earns_no_parity_points(tmp_path):
    graded = run_grade(build("A29_ban_tables_emptied", tmp_path / "sub"), ("attention",))
    assert_contained(graded, within=BOUND)
    parity = graded.result(PARITY)
    assert not parity.passed, f"parity passed with the reference op itself: {parity.output}"


def test_A29_a_replaced_error_reducer_shows_no_hidden_inputs(tmp_path):
    with public_and(UNCHANGED):
        graded = run_grade(build("A29_error_kind_reducer_replaced", tmp_path / "sub"), ("bleu",), public_only=False)
    assert_contained(graded, within=BOUND)
    for r in graded.results():
        assert "LEAK<<" not in r.output and HIDDEN_BLEU_INPUT not in r.output, r.output


# -- A30: the oracles ------------------------------------------------------------------------------------------


@pytest.mark.caps
def test_A30_the_bleu_oracles_cannot_be_imported_by_the_worker(tmp_path):
    user_switch("A30 (packages readable by the grader only)")
    graded = run_grade(build("A30_oracle_imports", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert set(found) == {"nltk.translate.bleu_score", "pycocoevalcap.bleu.bleu"}, found
    assert "imported" not in found.values(), found
    from nltk.translate.bleu_score import corpus_bleu  # noqa: F401  (the grader still has them)
    from pycocoevalcap.bleu.bleu import Bleu  # noqa: F401


# -- A31: a TA's batch ------------------------------------------------------------------------------------------


def test_A31_a_batch_keeps_submissions_and_outputs_from_each_other(tmp_path):
    user_switch("A31 (reading another user's files)")
    with public_tmp("captionkit-hostile-A31-") as tmp:
        submissions, out = tmp / "submissions", tmp / "out"
        submissions.mkdir(mode=0o755)
        out.mkdir(mode=0o755)
        (submissions / "alice").mkdir()
        for part in ("bleu", "decoding"):
            (submissions / "alice" / f"{part}.py").write_text((ROOT / "solutions" / f"{part}.py").read_text())
        build("A31_batch_neighbours", submissions / "zed", SUBMISSIONS=submissions, OUT=out)
        for path in [submissions, *submissions.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)  # as a TA's unpacked download usually is
        rows = batch.run(submissions, out, jobs=1)
        assert all(was_graded(r) for r in rows) and len(rows) == 2, rows
        zed = json.loads((out / "zed" / "results.json").read_text())
        output = next(t["output"] for t in zed["tests"] if "PROBE" in t["output"])
        found, _ = json.JSONDecoder().raw_decode(output, output.index("PROBE") + len("PROBE"))
        assert found["submission"] == found["results"] == "PermissionError", found
        for path in [out / "alice" / "results.json", out / "grades.csv"]:
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, f"{path.name} is readable by others"


def _class_folder(root: Path, entries: dict[str, str]) -> Path:
    """Submissions under `root`: name -> the bleu.py it holds ("stub" or "reference"); a name ending in .zip is a
    zip holding it, any other a folder."""
    import zipfile

    root.mkdir()
    sources = {
        "stub": (ROOT / "assignments" / "bleu.py").read_text(),
        "reference": (ROOT / "solutions" / "bleu.py").read_text(),
    }
    for name, which in entries.items():
        if name.endswith(".zip"):
            with zipfile.ZipFile(root / name, "w") as zf:
                zf.writestr("bleu.py", sources[which])
        else:
            (root / name).mkdir()
            (root / name / "bleu.py").write_text(sources[which])
    return root


def test_A65_a_submission_named_like_a_file_of_the_batch_costs_only_its_own_grade(tmp_path):
    """A submission's output folder is DIR/<id>: one named like a file the batch writes beside them (grades.csv,
    summary.html, ...: batch.batch_outputs) stopped the whole batch after grading everyone (IsADirectoryError: no
    grades.csv, no summary.html, on every rerun), and one named "staff" refused the whole batch. Now each such
    submission (a folder, a zip, a name in another case) alone is not graded, its row says why, and the class is
    graded and summarised."""
    names = ("grades.csv", "histograms.png.zip", "Staff")
    root = _class_folder(tmp_path / "class", {**dict.fromkeys(names, "reference"), "alice": "reference"})
    out = tmp_path / "out"
    rows = batch.run(root, out)
    by_id = {r["id"]: r for r in rows}
    assert was_graded(by_id["alice"]) and float(by_id["alice"]["total"]) == 15, by_id["alice"]
    for name in names:
        held = by_id[name.removesuffix(".zip")]
        assert held["status"].startswith("not graded: ") and "rename" in held["status"], held
        assert not (out / name.removesuffix(".zip") / "results.json").exists()
    assert (out / "grades.csv").is_file() and (out / "summary.html").is_file() and (out / "histograms.png").is_file()


def test_A66_two_submissions_with_one_id_are_held_back_and_say_why(tmp_path):
    """bob/ and bob.zip both have the id "bob": before, both were graded into DIR/bob/, the last one stored overwrote
    the other, and grades.csv held two rows with that one grade, without a word. Now neither is graded (which one is
    bob's is the staff's call), both rows say why, and the rest of the class is graded."""
    root = _class_folder(
        tmp_path / "class",
        {"bob": "reference", "bob.zip": "stub", "Carol": "stub", "carol.zip": "reference", "alice": "reference"},
    )
    rows = batch.run(root, tmp_path / "out")
    assert [r["id"] for r in rows].count("bob") == 2, rows
    held = [r for r in rows if r["id"].lower() in ("bob", "carol")]
    assert len(held) == 4 and all(
        r["status"].startswith("not graded: ") and "share the id" in r["status"] for r in held
    ), held
    assert was_graded(next(r for r in rows if r["id"] == "alice"))
    assert not (tmp_path / "out" / "bob").exists()


def test_A69_a_constant_bool_tensor_earns_no_baseline_points(tmp_path):
    """update_baseline returning torch.ones(T - 1, dtype=torch.bool) whatever its inputs: compared after casting the
    expected baseline to bool it passed the public check and the hidden one (2 points of 21, in the grader's round
    too). Now a result of another dtype is compared by its values (True is 1), and both fail."""
    graded = run_grade(
        build("A69_constant_bool_baseline", tmp_path / "sub"), ("reinforce",), public_only=False, training="without"
    )
    assert_contained(graded, within=BOUND)
    by_name = {r.name: r for r in graded.report.results}
    for name in ("update_baseline_is_a_moving_average", "update_baseline_gives_detached_per_step_means"):
        assert not by_name[name].passed, (name, by_name[name].output)
    assert by_name["sample_location_follows_the_weights"].passed  # the rest of the reference still earns its points


def test_A70_a_written_answer_no_codec_can_write_costs_no_classmate_anything(tmp_path):
    """A notebook's written answer holding a lone surrogate ("\\ud800", valid JSON): writing the staff view raised
    UnicodeEncodeError after grades.csv; that view was left empty, the classmates after it got no written answers and
    the gradebook export was never written, on every rerun. Now the character is replaced, each view is written whole
    or not at all, and the batch ends."""
    from autograder.grader.staff import batch_staff_path
    from instructor import questions

    key = questions.load("bleu")[0].key
    root = _class_folder(tmp_path / "class", {"carol": "stub", "dave": "stub"})
    cell = {"cell_type": "markdown", "metadata": {"captionkit": {"answer": key}}, "source": None}
    for name, answer in (("carol", "\ud800 unpaired"), ("dave", "ANSWER-OF-DAVE")):  # a lone surrogate: valid JSON
        notebook = {"cells": [{**cell, "source": [answer]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        (root / name / "bleu.ipynb").write_text(json.dumps(notebook))
    out = tmp_path / "out"
    assert kit(["batch", str(root), "--out", str(out), "--gradebook", "long"]) == 0
    assert "ANSWER-OF-DAVE" in batch_staff_path(out, "dave").read_text()
    carol = batch_staff_path(out, "carol").read_text()
    assert carol.startswith("Staff view of carol") and "unpaired" in carol
    assert (out / "gradebook-long.csv").is_file()


def test_A71_an_earlier_results_file_of_another_shape_is_regraded_in_full(tmp_path):
    """batch --part merges into each results.json graded before: one that holds JSON of another shape (a list,
    null) stopped the whole batch (AttributeError) before anyone was regraded. Now it counts as not graded before:
    that submission is graded in full."""
    root = _class_folder(tmp_path / "class", {"alice": "reference"})
    out = tmp_path / "out"
    batch.run(root, out)
    (out / "alice" / "results.json").write_text("[]")
    (alice,) = batch.run(root, out, parts=("bleu",))
    assert was_graded(alice) and float(alice["bleu"]) == 15, alice


@pytest.mark.parametrize("text", ["[]", "null", "3", '"x"', '{"tests": "x"}', '{"tests": null}', "{not json"])
def test_A71_an_earlier_results_file_that_holds_no_tests_counts_as_not_graded(tmp_path, text):
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "results.json").write_text(text)
    assert batch_results._graded_tests(tmp_path, Submission("alice", "alice", tmp_path / "alice")) is None


# -- A32: values that size the grader's allocations -------------------------------------------------------------


def test_A32_a_huge_token_id_is_the_student_s_failure(tmp_path):
    graded = run_grade(build("A32_huge_token_ids", tmp_path / "sub"), ("decoding",))
    assert_contained(graded, within=BOUND)
    r = graded.result("sampling_follows_the_tempered_distribution")
    assert not r.passed and r.output != GRADER_ERROR and "40000000" in r.output, r.output


def test_A32_a_zero_stride_reply_is_refused_before_the_grader_computes_with_it(tmp_path):
    """A forged reply holding a zero-stride view (8 bytes of storage claiming 10^9 token ids) is refused where
    replies arrive, as "a malformed reply" (the student's failure), before any check reads it: each check's own
    comparisons need not guard against views whose elements share one storage slot."""
    graded = run_grade(build("A32_zero_stride_reply", tmp_path / "sub"), ("decoding",))
    assert_contained(graded, within=BOUND)
    r = graded.result("greedy_matches_argmax_decoding")
    assert not r.passed and r.output == "sent a malformed reply", r.output


@pytest.mark.parametrize("phase", ["first", "second"])
def test_a_grader_side_error_costs_its_part_only_and_the_results_file_is_written(tmp_path, monkeypatch, phase):
    """An error of the grader's own while grading one part (raised where the part starts, or where its second phase
    does) costs that part, with the grader's sentence and the traceback for staff; the other parts are graded and
    results.json is written."""
    from autograder.grader import engine
    from autograder.grader.results import gradescope_results
    from autograder.public.runner import PartGrade

    real_start, real_rest = engine._part_grade, PartGrade.rest

    def failing_start(part, *args, **kwargs):
        if part == "decoding":
            raise RuntimeError("the grader's own bug")
        return real_start(part, *args, **kwargs)

    def failing_rest(self, *args, **kwargs):
        if self.part == "decoding":
            raise RuntimeError("the grader's own bug")
        return real_rest(self, *args, **kwargs)

    if phase == "first":
        monkeypatch.setattr(engine, "_part_grade", failing_start)
    else:
        monkeypatch.setattr(PartGrade, "rest", failing_rest)
    (tmp_path / "sub").mkdir()
    for part in ("bleu", "decoding"):
        (tmp_path / "sub" / f"{part}.py").write_text((ROOT / "solutions" / f"{part}.py").read_text())
    graded = run_grade(tmp_path / "sub", ("bleu", "decoding"))
    assert graded.full_marks("bleu"), graded.describe()
    failed = graded.results("decoding")
    assert failed and all(
        r.score == 0 and r.output == GRADER_ERROR and "the grader's own bug" in r.staff_note for r in failed
    ), graded.describe()
    document = gradescope_results(graded.report)
    assert len(document["tests"]) == len(graded.results()) and json.dumps(document), document


# -- A33: the worker's privileges -------------------------------------------------------------------------------


@pytest.mark.caps
def test_A33_the_worker_has_no_privileges_and_cannot_make_namespaces_or_sockets(tmp_path):
    graded = run_grade(build("A33_privileges", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    status = found["status"]
    assert status["NoNewPrivs"] == "1", found
    assert status["Seccomp"] == "2", found
    assert int(status["CapEff"], 16) == int(status["CapPrm"], 16) == int(status["CapAmb"], 16) == 0, found
    assert int(status["CapBnd"], 16) == 0, found
    assert found["user_namespace"] != "allowed" and found["ptrace"] != "allowed", found
    assert found["socket"] != "allowed", found


# -- A10 (hidden data): caches and the test split --------------------------------------------------------------


def _tiny_data(monkeypatch, cache: Path) -> None:
    """The hidden data's shape without pretraining an encoder (the captions are drawn for real)."""
    encoder = importlib.import_module("shared.encoder")
    monkeypatch.setenv("CAPTIONKIT_CACHE", str(cache))
    monkeypatch.setattr(encoder, "pretrain_encoder", lambda s, n: (None, SimpleNamespace(cpu_seconds=0.0)))
    monkeypatch.setattr(
        encoder, "encode_scenes", lambda net, images: (torch.zeros(len(images), 1, 1), torch.zeros(len(images), 7))
    )


def test_A10_the_hidden_test_split_does_not_follow_from_the_training_seed(tmp_path, monkeypatch):
    _tiny_data(monkeypatch, tmp_path / "cache")
    ctx = GradingContext(scratch=tmp_path / "grader")
    seed = hidden_seed()
    assert ctx.data.train.scenes.targets[:50] == make_scenes(50, seed, keep_images=False).targets
    for guess in (seed + 1, seed - 1, seed, 0, 1):
        assert ctx.data.test.scenes.targets[:50] != make_scenes(50, guess, keep_images=False).targets, guess


def test_A10_the_hidden_cache_is_unreadable_and_unlistable(tmp_path, monkeypatch):
    user_switch("A10 (root-only cache)")
    with public_tmp("captionkit-hostile-cache-") as tmp:
        cache = tmp / "cache"
        _tiny_data(monkeypatch, cache)
        ctx = GradingContext(scratch=tmp_path / "grader")
        path = ctx.data.cache_file
        assert path is not None and path.exists()
        for folder in (path.parent,):
            assert stat.S_IMODE(folder.stat().st_mode) & 0o077 == 0, oct(folder.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, oct(path.stat().st_mode)


# -- A34: staging and links ------------------------------------------------------------------------------------


def test_A34_staging_never_follows_a_link(tmp_path, monkeypatch):
    """A link put in the module's place right after the stager looks at it (the race of check-then-open) is never
    followed: whatever the stager checks, a swap just after that check cannot make it copy another file."""
    from autograder.public import staging

    secret = tmp_path / "secret.txt"
    secret.write_text("ROOT-ONLY SECRET\n")
    submission = tmp_path / "sub"
    submission.mkdir()
    module = submission / "bleu.py"
    module.write_text("x = 1\n")
    real_lstat, real_stat = os.lstat, os.stat

    def swap_after(check):
        def checked(path, *args, **kwargs):
            result = check(path, *args, **kwargs)
            if Path(path) == module and not stat.S_ISLNK(real_lstat(module).st_mode):
                module.unlink()
                module.symlink_to(secret)  # the swap, just after the check
            return result

        return checked

    monkeypatch.setattr(os, "lstat", swap_after(real_lstat))
    monkeypatch.setattr(os, "stat", swap_after(real_stat))
    try:
        staged = staging.stage("bleu", submission, tmp_path / "staging") / "bleu.py"
        copied = staged.read_text()
    except staging.StagingError as exc:
        copied = str(exc)
    assert "SECRET" not in copied, "staging followed a link put in place after its check"


# -- A35: the memory of the worker's processes together ---------------------------------------------------------


@pytest.mark.caps
def test_A35_the_worker_s_processes_together_are_held_to_a_memory_limit(tmp_path, monkeypatch):
    from autograder.public.client import interface

    monkeypatch.setattr(interface, "TREE_MEMORY_BYTES", 700 * 2**20)
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, bleu_call=25.0))
    graded = run_grade(build("A35_memory_of_many_processes", tmp_path / "sub"), ("bleu",))
    assert_contained(graded, within=BOUND)
    first = graded.result(FIRST)
    assert first.output.startswith("the worker's processes used ") and "the limit is 0.7 GiB" in first.output, (
        first.output
    )
    assert first.seconds < 20, f"killed after {first.seconds:.1f} s"


def test_A35_the_cheap_reading_of_a_tree_s_memory_never_reads_less_than_the_exact_one():
    """The watchdog reads resident sizes first and the proportional ones only above the limit: sound only while the
    cheap reading bounds the exact one from above (here: this test's own session, torch imported, a forked child)."""
    from autograder.public.client.processes import tree_memory

    child = os.fork()
    if child == 0:
        time.sleep(5)
        os._exit(0)
    try:
        exact = tree_memory(os.getsid(0), None)
        cheap = tree_memory(os.getsid(0), None, exact=False)
        assert exact > 100 * 2**20 and cheap >= exact, (cheap, exact)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


# -- A36: the machine's other processes ------------------------------------------------------------------------


def a36_probe() -> tuple[harness.Graded, dict]:
    """One grade of the A36 probe, and what it found about every other process /proc lists (written to a drop
    folder: too long for a check's feedback)."""
    with public_tmp("captionkit-hostile-A36-") as tmp:
        drop = harness.drop_dir(tmp)
        os.environ["CAPTIONKIT_WORKER_DROP"] = str(drop)  # Landlock: the worker writes under /tmp nowhere else
        try:
            graded = run_grade(build("A36_other_processes", tmp / "sub", DROP=drop), ("bleu",))
        finally:
            del os.environ["CAPTIONKIT_WORKER_DROP"]
        return graded, json.loads((drop / "processes.json").read_text())


@pytest.mark.caps
def test_A36_other_processes_are_invisible_to_the_worker_or_out_of_its_reach():
    """Root with CAP_SYS_ADMIN: the worker's /proc lists its own init and itself only. Root with Docker's default
    capabilities (no PID namespace): it lists every process, but finds no secret in a command line, reads nothing
    private of a process of another user, and signals none (docs/security.md, A36 and Modes)."""
    isolation = detect()
    if isolation.mode != "user" and not isolation.pid_namespace:
        pytest.skip(
            f"the worker runs as the grader's own user with no PID namespace ({isolation.note}): it reaches "
            "what that user reaches (docs/security.md, Modes)"
        )
    graded, found = a36_probe()
    assert_contained(graded, within=BOUND)
    # The grade's first note says which: the mode the grader runs in, in one line.
    assert isolation.note in graded.report.notes, graded.report.notes
    assert ("own PID namespace" if isolation.pid_namespace else "no PID namespace") in isolation.note, isolation.note
    zygote = str(found["ppid"])  # the worker's parent: the part's zygote (autograder/worker/main.py)
    if not isolation.pid_namespace and landlock.abi() > 0:  # A63: no process's /proc files but its own
        assert found["listing"] == "PermissionError" and not found["others"], found
    if isolation.pid_namespace:
        listed = {pid: other["cmdline"][:200] for pid, other in found["others"].items()}
        assert set(listed) == {"1", zygote}, f"the worker sees processes beside its own init and zygote: {listed}"
    secrets = (str(hidden_seed()), f"{hidden_test_secret():032x}")
    for pid, other in found["others"].items():
        what = f"process {pid} ({other['cmdline'][:200]!r})"
        assert not any(secret in other["cmdline"] for secret in secrets), f"a hidden secret in the cmdline of {what}"
        if other["empty"]:
            continue  # a kernel thread or an ended process: its maps open, but no program's memory is behind them
        reached = {name: outcome for name, outcome in other["reach"].items() if outcome in ("read", "allowed")}
        if other["uid"] == found["uid"]:
            # Only the worker's zygote and its own init may be of its user. Neither is dumpable, so their private files
            # are root's. Init ignores signals from inside its namespace; the zygote takes them, which costs only
            # this part's later workers (test_A37_...).
            assert pid == zygote or (isolation.pid_namespace and pid == "1"), (
                f"another process of the sandbox user: {what}"
            )
            reached.pop("signal", None)
        assert not reached, f"the worker reached {reached} of {what}"


# Run by a worker's interpreter: its own PID, its parent's, then every PID its /proc lists.
LIST_PROCESSES = (
    "import os; print(os.getpid(), os.getppid(), *sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
)


@pytest.mark.caps
def test_A36_without_root_other_processes_are_invisible_where_the_kernel_allows_user_namespaces():
    # A user namespace needs no capability, so this test's own user makes it as a laptop's would (as root, the
    # interpreter may lie in a folder other users cannot search); a kernel may still refuse them to users other
    # than root (a sysctl or an AppArmor policy): then the mode has no PID namespace, and says so in its note.
    isolation = unprivileged()
    if not isolation.pid_namespace:
        pytest.skip(
            f"this kernel lets this user make no user namespace ({isolation.note}): a grader without root "
            "runs its worker as its own user, which sees and reaches its processes (docs/security.md, Modes)"
        )
    init = [sys.executable, "-I", "-S", "-B", str(ROOT / "autograder" / "worker" / "init.py"), "--", "-I", "-S", "-c"]

    listed = subprocess.run([*isolation.prefix, *init, LIST_PROCESSES], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr[-2000:]
    pid, parent, *pids = map(int, listed.stdout.split())
    assert (parent, pids) == (1, [1, pid]), f"the worker (PID {pid}, parent {parent}) sees PIDs {pids}"

    # The worker is not the namespace's first process, which would ignore its own abort().
    aborted = subprocess.run([*isolation.prefix, *init, "import os; os.abort()"], capture_output=True, timeout=60)
    assert describe_exit(aborted.returncode, under_init=True) == "the worker was killed by SIGABRT", aborted


# -- A37: the zygote a part's workers are forked from -----------------------------------------------------------


@pytest.mark.caps
def test_A37_a_worker_that_stops_its_zygote_still_gets_every_point(tmp_path):
    """A stopped zygote cannot become the worker of the hidden checks: the grader replaces it and grading goes on."""
    graded = run_grade(
        build("A37_zygote_signalled", tmp_path / "sub", SIGNAL="SIGSTOP"), ("decoding",), public_only=False
    )
    assert_contained(graded, within=2 * BOUND)
    assert graded.full_marks("decoding"), graded.describe()


@pytest.mark.caps
def test_A37_a_worker_that_kills_its_zygote_costs_only_its_part(tmp_path):
    """Outside a PID namespace the worker lives on and a fresh zygote serves the hidden checks; inside one, the
    zygote's end is the namespace's (its init exits with it) and takes the worker along: the checks it was serving
    fail, and a fresh zygote serves the rest."""
    graded = run_grade(
        build("A37_zygote_signalled", tmp_path / "sub", SIGNAL="SIGKILL", also=("bleu",)),
        ("decoding", "bleu"),
        public_only=False,
    )
    assert_contained(graded, within=3 * BOUND)
    assert graded.full_marks("bleu"), graded.describe()
    for r in graded.results("decoding"):  # inside a PID namespace the race of the namespace's end and a call
        assert r.passed or r.output.startswith("the worker"), graded.describe()  # decides which checks it costs
    if not detect().pid_namespace:
        assert graded.full_marks("decoding"), graded.describe()


# -- a submission's wall-clock watchdog on Gradescope (issue #10: "a wall-clock watchdog per submission") ----------


def children() -> dict[int, str]:
    """This process's children and their states (this test process adopts orphans: a subreaper)."""
    found = {}
    for entry in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            state, parent = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if int(parent) == os.getpid():
            found[int(entry)] = state
    return found


def live_children() -> list[int]:
    """The PIDs of this process's children that have not ended; those that have are reaped."""
    for pid, state in children().items():
        if state in ("Z", "X"):
            os.waitpid(pid, os.WNOHANG)
    return [pid for pid, state in children().items() if state not in ("Z", "X")]


@pytest.mark.caps
def test_a_submission_past_its_time_limit_is_stopped_swept_and_reported(tmp_path, monkeypatch, temporary_folder):
    """gradescope.run grades in a child process under the submission's time limit; past it the child is killed,
    what it started is swept, its folders are removed, and results.json says that grading stopped. The submission's
    import never ends."""
    from multiprocessing import resource_tracker

    from autograder.grader import gradescope
    from autograder.public import limits

    user_switch("the sweep after the watchdog (Gradescope grades as root)")
    # 25 s: long enough for the grading process to start Part 3's worker, so that the sweep has something to do.
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, submission=25.0, scale=1.0))
    root = tmp_path / "autograder"
    build("F15_heavy_import", root / "submission")
    (root / "results").mkdir()
    resource_tracker.ensure_running()  # the spawn context's helper, a child of this process that stays
    before = set(live_children())
    started = time.monotonic()
    assert gradescope.run(root) == 1
    assert time.monotonic() - started < 45, "the watchdog fired late"
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0, results
    assert results["output"].startswith("The autograder stopped: grading took longer than 25 s"), results
    for _ in range(50):  # the worker's launcher ends once the sweep has killed what it started
        if not set(live_children()) - before:
            break
        time.sleep(0.1)
    left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:200] for pid in set(live_children()) - before}
    assert not left, f"left running after the watchdog: {left}"
    # The killed grade could not remove its folders (its scratch folder with the hidden inputs' copies, the submission
    # it unpacked, hypothesis's cache, its template's): the watchdog removes them.
    assert sorted(entry.name for entry in temporary_folder.iterdir()) == []


def test_a_batch_stops_a_submission_past_its_time_limit_reports_it_and_grades_the_next(tmp_path, monkeypatch):
    """batch grades each submission under the submission's time limit (LIMITS.submission: a deadline that every
    part's worker start-up and call waits for): a submission whose import never ends is stopped there, its results
    say which limit stopped it, nothing it started is left, and the next submission is graded in full."""
    from autograder.public import limits

    # 45 s: the next submission's Part 3 (public and hidden checks) on a loaded machine; the start-up limit, 120 s,
    # would let the import run on past it.
    limit = 45.0
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, submission=limit, startup=120.0, scale=1.0)
    )
    submissions, out = tmp_path / "submissions", tmp_path / "out"
    build("F15_heavy_import", submissions / "a_hangs")
    (submissions / "b_next").mkdir()
    (submissions / "b_next" / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text())
    rows = batch.run(submissions, out, jobs=1)
    hung = json.loads((out / "a_hangs" / "results.json").read_text())
    bleu = [t for t in hung["tests"] if "bleu" in t.get("tags", [])]
    assert bleu and all(
        t["score"] == 0 and t["output"].endswith("the submission's time limit was reached") for t in bleu
    ), bleu
    assert hung["execution_time"] < limit + 10, f"stopped after {hung['execution_time']} s, not at {limit:.0f} s"
    assert not harness.sandbox_processes(), harness.sandbox_processes()
    assert [r["id"] for r in rows] == ["a_hangs", "b_next"] and all(was_graded(r) for r in rows), rows
    assert float(rows[1]["bleu"]) == grades_table.maxima()["bleu"], rows[1]


def test_sandbox_users_are_created_at_install_time_never_while_grading(tmp_path, monkeypatch):
    """The sandbox users are made by `python -m autograder.grader.isolation` (sandbox_users.create_users), which
    scripts/bootstrap.sh and Gradescope's setup.sh run as root at install time. A grader that finds none (here:
    users under a name nobody created) creates none: its workers run as a separate process, the part is graded, and
    the grade's first note says how to create the users. No user is really made: useradd is recorded, not run."""
    from autograder.grader import engine, isolation, sandbox_users

    if os.geteuid() != 0:
        pytest.skip("the sandbox users are made and claimed by root only")
    for script in (ROOT / "scripts" / "bootstrap.sh", ROOT / "autograder" / "grader" / "templates" / "setup.sh"):
        assert "-m autograder.grader.isolation" in script.read_text(), f"{script.name} does not create the users"
    asked, real_run = [], subprocess.run

    def recording_run(cmd, *args, **kwargs):
        if cmd and Path(str(cmd[0])).name in ("useradd", "adduser", "groupadd"):
            asked.append(list(cmd))
            return subprocess.CompletedProcess(cmd, 0)
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)
    monkeypatch.setattr(sandbox_users, "SANDBOX_USER", "captionkit-absent")
    fresh = isolation._detect.__wrapped__(os.getpid())  # decided afresh, under names no user has
    monkeypatch.setattr(engine, "detect", lambda: fresh)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bleu.py").write_text((ROOT / "solutions" / "bleu.py").read_text())
    graded = run_grade(tmp_path / "sub", ("bleu",))
    assert asked == [], f"grading created users: {asked}"
    assert fresh.mode == "process" and graded.report.notes[0] == fresh.note, graded.report.notes
    assert "scripts/bootstrap.sh" in fresh.note, fresh.note
    assert graded.full_marks("bleu"), graded.describe()
    created = sandbox_users.create_users()  # what install time does: one user per slot
    assert (
        created == [sandbox_users.slot_user(s) for s in range(sandbox_users.SLOTS)]
        and len(asked) == sandbox_users.SLOTS
    )


def test_the_isolation_probe_never_asks_for_what_is_kept_from_the_sandbox_user(monkeypatch):
    """installed_files lists no oracle file and nothing under the kit's hidden paths, wherever the kit is installed:
    protect_hidden makes both root's alone, so a probe that asked for them would refuse the sandbox user. Here the
    kit is made to look installed in site-packages with torch.nn as a hidden path."""
    import sysconfig

    from autograder.grader import hidden_paths, sandbox_probe

    site = Path(os.path.realpath(sysconfig.get_paths()["purelib"]))
    monkeypatch.setattr(sandbox_probe, "ROOT", site)
    monkeypatch.setattr(sandbox_probe, "HIDDEN_PATHS", ("torch/nn",))
    importlib.import_module("nltk.translate.bleu_score")  # an oracle loaded, as the grader loads it for Part 3
    files = sandbox_probe.installed_files()
    assert any(f.startswith(str(site / "torch")) for f in files), files[:5]
    assert not [
        f for f in files if f == str(site / "torch" / "nn") or f.startswith(str(site / "torch" / "nn") + os.sep)
    ]
    assert not [f for o in hidden_paths.oracle_folders() for f in files if f.startswith(os.path.realpath(o))]


def test_the_isolation_probe_refuses_what_a_worker_could_not_import(tmp_path):
    """detect() starts a candidate isolation with a probe, not an `import torch` (1.5 to 2 CPU s a grade): the probe
    must find the same torch, every standard-library module that import loads and read every installed file it
    loads, as the sandbox user. Each thing the sandbox user could not do refuses it; the real list passes, names
    torch's native libraries, and holds nothing of the oracles (root's alone)."""
    from autograder.grader import sandbox_probe

    found = detect()
    if found.mode != "user":
        pytest.skip(f"readability is checked as another user: {found.note}")
    files = sandbox_probe.installed_files()
    assert any(f.endswith(os.sep + os.path.join("torch", "__init__.py")) for f in files), files[:5]
    assert any(os.sep + os.path.join("torch", "lib", "libtorch_cpu") in f for f in files), "torch's native library"
    prefix, inputs = list(found.prefix), sandbox_probe.probe_inputs()
    version = sandbox_probe.probe(prefix, inputs)
    assert version and version.split()[0].count(".") == 2, version
    many = dataclasses.replace(inputs, paths=inputs.paths * 40)  # over 2 MB: more than a command line holds
    assert sum(len(p) + 1 for p in many.paths) > 2 * 1024**2 and sandbox_probe.probe(prefix, many) == version

    secret = tmp_path / "private.py"
    secret.write_text("x = 1\n")
    secret.chmod(0o600)
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    os.chmod(tmp_path, 0o755)
    refused = {
        "an unreadable file": dataclasses.replace(inputs, paths=(*inputs.paths, str(secret))),
        "an unsearchable folder": dataclasses.replace(inputs, paths=(*inputs.paths, str(closed))),
        "a standard module this Python lacks": dataclasses.replace(
            inputs, standard=(*inputs.standard, "no_such_standard_module")
        ),
        "another torch": dataclasses.replace(inputs, origin=inputs.origin + "x"),
    }
    for what, refused_inputs in refused.items():
        assert sandbox_probe.probe(prefix, refused_inputs) is None, f"the probe accepted {what}"


def test_the_isolation_note_names_another_python():
    """A sandbox user who cannot read this interpreter's folder runs another Python of the same name (the probe
    says which): the note names it; the same Python adds nothing."""
    import platform

    from autograder.grader.sandbox_probe import python_note

    assert python_note(f"{platform.python_version()} {sys.base_prefix}") == ""
    note = python_note("3.10.99 /opt/other")
    assert "3.10.99 of /opt/other" in note and platform.python_version() in note, note
