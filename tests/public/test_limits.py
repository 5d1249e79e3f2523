"""One time-limit model (autograder/public/limits.py): every knob in TimeLimits, overridable by the environment
variables the kit has always read, no check's limit above its part's, and the earliest deadline of a call wins
with its own message."""

import dataclasses
import time
from pathlib import Path

import pytest

from autograder.grader.checks import all_checks
from autograder.public import checks as registry
from autograder.public import limits
from autograder.public.limits import Deadline, TimeLimits, earliest, part_deadline
from autograder.public.runner import WithinCheck


def test_the_environment_overrides_the_scale_and_the_submission_limit():
    config = TimeLimits.from_environment({"CAPTIONKIT_TIME_SCALE": "4", "CAPTIONKIT_SUBMISSION_TIME_LIMIT": "120"})
    assert (config.scale, config.submission) == (4.0, 120.0)
    assert config.seconds(config.part) == 1200.0
    assert TimeLimits.from_environment({}) == TimeLimits()


@pytest.mark.parametrize(
    "variable, value",
    [("CAPTIONKIT_TIME_SCALE", "fast"), ("CAPTIONKIT_TIME_SCALE", "0"), ("CAPTIONKIT_SUBMISSION_TIME_LIMIT", "-5")],
)
def test_a_bad_setting_names_its_variable_or_field(variable, value):
    with pytest.raises(ValueError, match=r"CAPTIONKIT_TIME_SCALE|scale|submission"):
        TimeLimits.from_environment({variable: value})


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(TimeLimits)])
def test_every_limit_refuses_what_is_not_a_number_above_zero_naming_its_field(field):
    """Each field of TimeLimits, set to a negative number, NaN or text, is refused with its name; only the budget's
    allowance may be 0 (a budget of exactly its factor times the reference)."""
    for bad in (-1.0, float("nan"), "60", True):
        with pytest.raises(ValueError, match=rf"time limits: {field} must be a number"):
            TimeLimits(**{field: bad})
    if field == "budget_allowance":
        assert TimeLimits(budget_allowance=0).budget_allowance == 0
    else:
        with pytest.raises(ValueError, match=rf"{field} must be a number above 0, got 0"):
            TimeLimits(**{field: 0})


def test_no_registered_check_has_a_limit_above_its_parts():
    checks = all_checks()
    assert checks and all(0 < c.timeout <= limits.LIMITS.part for part in checks.values() for c in part)


def test_a_check_with_a_limit_above_its_parts_is_refused_at_registration():
    with pytest.raises(ValueError, match=r"timeout=600 s; .* at most the part's time limit \(300 s\)"):

        @registry.check(timeout=600, part="no_such_part")
        def too_long(student, ctx):
            """never registered"""

    assert registry.registered("no_such_part") == []


class _Recorder:
    """A worker stand-in that records the deadline each call is given."""

    deadline = None

    def __init__(self):
        self.calls = []

    def call(self, recipe, timeout=None, deadline=None, **kwargs):
        self.calls.append((recipe, timeout, deadline, kwargs))
        return "ok"


def test_every_call_of_a_check_is_passed_the_checks_deadline():
    worker, deadline = _Recorder(), Deadline.after(30.0, "the check's time limit was reached")
    assert WithinCheck(worker, deadline).call("bleu.corpus_bleu", timeout=10.0, hyps=[]) == "ok"
    assert worker.calls == [("bleu.corpus_bleu", 10.0, deadline, {"hyps": []})]


def test_the_earliest_deadline_wins_with_its_message():
    part = part_deadline()
    check = Deadline.after(1.0, "the check's time limit was reached")
    assert earliest(None, part, check) is check and earliest(None) is None
    assert abs(part.left() - limits.LIMITS.seconds(limits.LIMITS.part)) < 5
    ends_by = time.monotonic() + 2.0
    assert part_deadline(ends_by).at == ends_by
    assert part_deadline(ends_by).reached == "the submission's time limit was reached"  # the limit that ends it
    assert part_deadline(ends_by + 10**6).reached == "the part's time limit was reached"


def test_limits_are_read_when_used(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, part=7.0, scale=2.0))
    assert 13.0 < part_deadline().left() <= 14.0


def test_every_knob_has_its_line_in_the_table():
    """Each field of TimeLimits is a row of limits.py's table, the one place an instructor reads them."""
    rows = {line.split()[0] for line in limits.__doc__.splitlines() if line.startswith("    ") and line.split()}
    assert {f.name for f in dataclasses.fields(TimeLimits)} - rows == set()


def test_the_limits_of_one_checks_calls_and_of_retrieval_are_read_from_limits_when_used(monkeypatch):
    """The bleu checks' calls, the styled updates' call (stylenet) and the trained model's time in Part 1's retrieval
    take LIMITS' values when they run: 10, 60 and 20 s by default."""
    from types import SimpleNamespace

    from autograder.grader.training import retrieval_file
    from autograder.public.checks import bleu, stylenet
    from autograder.public.compare import CheckFailed

    assert (TimeLimits().bleu_call, TimeLimits().styled_steps_call, TimeLimits().retrieval) == (10.0, 60.0, 20.0)
    monkeypatch.setattr(
        limits, "LIMITS", dataclasses.replace(limits.LIMITS, bleu_call=1.5, styled_steps_call=2.5, retrieval=3.5)
    )
    worker = _Recorder()
    bleu._call(worker, "corpus_bleu", "a case", hyps=[])
    with pytest.raises(CheckFailed, match="unexpected reply"):  # the recorder's "ok" is no answer of styled_steps
        stylenet._run_styled(
            worker, 0, {"E": 2, "H": 2, "rank": 1}, "sgd_all", "factual", {"weights": None, "grads": None}, n=2, steps=1
        )
    assert [timeout for _, timeout, _, _ in worker.calls] == [1.5, 2.5]
    assert retrieval_file(SimpleNamespace(share=lambda name, make: name))["retrieval_seconds"] == 3.5


# Training budgets (GradingContext.budget): the reference is timed in a forked copy of the grader, and only for a run
# that needs it (autograder.grader.training.run_within_budget): a run is first given the least budget any machine
# grants, the budget with the reference's own time at zero.

IMPORT_SECONDS = 0.5


def _pause(seconds: float) -> None:
    time.sleep(seconds)


@pytest.fixture
def ctx(tmp_path, monkeypatch):
    """A grading context without data whose optimizers' import 'takes' IMPORT_SECONDS (counted: timed once)."""
    from autograder.grader import context

    imports = []
    monkeypatch.setattr(context, "import_optimizer_machinery", lambda: imports.append(1) or IMPORT_SECONDS)
    ctx = context.GradingContext(tmp_path)
    ctx.__dict__["data"] = None  # the timings below need no data set
    ctx.imports = imports
    return ctx


def test_a_budget_times_its_reference_once_in_a_forked_copy_and_counts_the_import_in_each_run(ctx):
    ran_here = []
    budget = ctx.budget("a", lambda: ran_here.append(_pause(0.2)), scale=3)
    ctx.budget("b", _pause, setup=lambda: 0.1)
    seconds = ctx.reference_seconds
    assert ran_here == [], "a reference was timed in the grading process itself, not in a forked copy"
    assert 3 * (0.2 + IMPORT_SECONDS) <= seconds["a"] < 3 * (0.2 + IMPORT_SECONDS) + 3, seconds  # scaled
    assert 0.1 + IMPORT_SECONDS <= seconds["b"] < 0.1 + IMPORT_SECONDS + 1, seconds
    assert budget == limits.LIMITS.budget_factor * seconds["a"] + limits.LIMITS.budget_allowance
    assert ctx.budget("a", lambda: pytest.fail("timed twice")) == budget
    assert ctx.imports == [1], "the optimizers' import is timed once per grading run"


def test_a_reference_that_fails_to_time_raises_the_grader_s_error(ctx, capfd):
    def broken():
        raise RuntimeError("the reference broke")

    with pytest.raises(RuntimeError, match="timing run failed"):
        ctx.budget("broken", broken)
    assert "the reference broke" in capfd.readouterr().err
    assert not ctx.knows_budget("broken")


@pytest.mark.parametrize("scale", [1, 8, 12])
def test_the_least_budget_is_a_lower_bound_of_every_budget_of_its_scale(ctx, scale):
    least = ctx.least_budget(scale)
    assert least == limits.LIMITS.budget_factor * IMPORT_SECONDS * scale + limits.LIMITS.budget_allowance
    assert least <= ctx.budget("instant", lambda: None, scale=scale)
    assert least < ctx.budget("slow", lambda: _pause(0.3), scale=scale)


class _Run:
    """A student's training run as run_within_budget sees it: `train(seconds)` ends with a reply when the run needs
    at most `seconds`, else its worker is killed and TimedOut raised (autograder.public.client.Worker.call)."""

    def __init__(self, needs: float, ends=None):
        self.needs, self.ends = needs, ends
        self.alive, self.given, self.restarts = True, [], 0

    def train(self, seconds: float):
        from autograder.public.client import TimedOut

        assert self.alive, "a call on a dead worker"
        self.given.append(seconds)
        if self.ends is not None:
            self.alive = False
            raise self.ends
        if self.needs > seconds:
            self.alive = False
            raise TimedOut(f"timed out after {seconds:.0f} s")
        return {"seconds": self.needs}

    def restart(self) -> None:
        self.restarts += 1
        self.alive = True


def _spec(run: _Run):
    """A training spec of 12 epochs whose reference 'trains' 0.3 s an epoch, and refuses to be timed while the
    student's worker is alive (the timing child exits non-zero, so the budget raises)."""
    from autograder.grader.training import SPECS

    def reference(ctx, seed, epochs, prepared):
        if run.alive:
            raise RuntimeError("the reference was timed beside a live worker")
        _pause(0.3)

    return dataclasses.replace(SPECS["show_and_tell"], part="toy", train_reference=reference, prepare=lambda ctx: None)


def test_a_run_within_the_least_budget_never_times_its_reference(ctx):
    from autograder.grader.training import run_within_budget

    run = _Run(needs=5.0)
    assert run_within_budget(_spec(run), run, ctx, run.train) == {"seconds": 5.0}
    assert run.given == [ctx.least_budget(12)] and run.restarts == 0
    assert not ctx.knows_budget("toy"), "the reference was timed for a run that did not need it"


def test_a_run_past_the_least_budget_is_stopped_timed_and_run_again_with_its_budget(ctx):
    from autograder.grader.training import run_within_budget

    least = ctx.least_budget(12)
    run = _Run(needs=least + 5)  # within its budget: about 3 x 12 x (0.3 + 0.5) + 15 s
    spec = _spec(run)
    assert run_within_budget(spec, run, ctx, run.train) == {"seconds": least + 5}
    assert ctx.knows_budget("toy"), "the reference was not timed"
    assert run.given == [least, spec.time_budget(ctx)] and run.restarts == 1
    assert run.given[1] > least + 5


def test_a_run_past_its_budget_fails_with_the_budget_s_timeout(ctx):
    from autograder.grader.training import run_within_budget
    from autograder.public.client import TimedOut

    run = _Run(needs=10**6)
    spec = _spec(run)
    with pytest.raises(TimedOut) as ended:
        run_within_budget(spec, run, ctx, run.train)
    assert str(ended.value) == f"timed out after {spec.time_budget(ctx):.0f} s"
    assert run.given == [ctx.least_budget(12), spec.time_budget(ctx)]
    # With the budget known (timed for an earlier run of the same grading run), one attempt with the budget.
    again = _Run(needs=10**6)
    with pytest.raises(TimedOut):
        run_within_budget(_spec(again), again, ctx, again.train)
    assert again.given == [spec.time_budget(ctx)]


def test_a_run_ended_by_anything_but_its_own_time_limit_is_not_run_again(ctx):
    from autograder.grader.training import run_within_budget
    from autograder.public.client import WorkerDied

    run = _Run(needs=1.0, ends=WorkerDied("the part's time limit was reached"))
    with pytest.raises(WorkerDied, match="the part's time limit"):
        run_within_budget(_spec(run), run, ctx, run.train)
    assert len(run.given) == 1 and run.restarts == 0 and not ctx.knows_budget("toy")


SLOW_BLEU = """
import time


def ngram_counts(tokens, n):
    time.sleep(60)
"""


def test_a_call_ended_by_its_own_timeout_raises_timed_out_and_by_a_deadline_worker_died(tmp_path):
    from autograder.public.client import SEPARATE_PROCESS, TimedOut, Worker, WorkerDied, copy_runtime

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "bleu.py").write_text(SLOW_BLEU)
    worker = Worker(
        "bleu", tmp_path / "sub", tmp_path / "scratch", copy_runtime(tmp_path / "runtime"), SEPARATE_PROCESS
    )
    try:
        with pytest.raises(TimedOut, match="timed out after"):
            worker.call("bleu.ngram_counts", timeout=0.25, tokens=["1"], n=1)
        assert not worker.alive
        worker.restart()
        check = Deadline.after(0.5, "the check's time limit was reached")
        with pytest.raises(WorkerDied, match="the check's time limit") as ended:
            worker.call("bleu.ngram_counts", timeout=30.0, deadline=check, tokens=["1"], n=1)
        assert not isinstance(ended.value, TimedOut)
    finally:
        worker.close()


def literal_check_limits(source: str) -> list[int]:
    """Lines of `source` where a check is registered with a literal number of seconds: `@check(timeout=30)`."""
    import ast

    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "check"
        and any(k.arg == "timeout" and isinstance(k.value, ast.Constant) for k in node.keywords)
    ]


def test_every_check_time_limit_is_a_named_limit_of_the_limits_object():
    """A check's limit is LIMITS.check (the default) or another field of autograder.public.limits.TimeLimits, so
    every time limit of grading is in one place."""
    root = Path(__file__).resolve().parents[2]
    modules = [*(root / "autograder/public/checks").rglob("*.py"), *(root / "autograder/grader/checks").rglob("*.py")]
    found = {path.relative_to(root).as_posix(): literal_check_limits(path.read_text()) for path in modules}
    assert not any(found.values()), found
    assert literal_check_limits("@check(timeout=60)\ndef f(s, c): pass\n") == [1]
    assert literal_check_limits("@check(timeout=LIMITS.hidden_check)\ndef f(s, c): pass\n") == []
