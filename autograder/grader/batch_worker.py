"""What a batch's worker runs for each submission (`grade_job`): the grade, in a child process of its own under a
wall-clock watchdog, returning the documents the coordinator writes (results.json, the feedback report, the staff
view). A worker whose kit differs from the coordinator's refuses to grade.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import multiprocessing.process
import os
import pickle
import select
import signal
import tempfile
import threading
import time
from pathlib import Path

from autograder.grader.batch_jobs import Job, KitMismatch, kit_fingerprint, materialise
from autograder.public import limits
from autograder.public.client.disk import passable_folder
from autograder.public.progress import for_terminal

_KIT = None
# One grade at a time per process: a grading run holds this process's sandbox user (sandbox_users.py), and
# two runs in one process (a dask worker given several threads) would sweep each other's workers away.
_ONE_GRADE = threading.Lock()


# Seconds a grade may run past the submission's time limit before the watchdog ends it (scaled like it): the grade's
# own deadline comes first and leaves only the grader's work after it (the checks it marks not run, the report).
WATCHDOG_GRACE = 120.0


def default_watchdog() -> float:
    """The watchdog of a grade when the batch names none: the submission's time limit plus WATCHDOG_GRACE, scaled."""
    return limits.LIMITS.seconds(limits.LIMITS.submission + WATCHDOG_GRACE)


def grade_job(job: Job, progress: str | None = None) -> dict:
    """Grade one submission (the task every kind of worker runs): {"results": the results.json document,
    "report": the feedback report's HTML or None, "staff": the staff view (autograder/grader/staff.py)}. Raises
    KitMismatch on a worker whose kit differs, and what the grading raised.
    The grade runs in a child process under a wall-clock watchdog (job.watchdog seconds): past it the child and
    everything it started are killed and the documents say "grader stopped after N s", whatever the grading process
    was doing (waiting on a worker, or stuck in work of its own). progress: a prefix to show where the grade is on
    this terminal (--jobs 1)."""
    global _KIT
    with _ONE_GRADE:
        _KIT = _KIT or kit_fingerprint()
        if job.kit != _KIT:
            raise KitMismatch(
                "this worker's kit (code, hidden seed or torch version) differs from the "
                "coordinator's; install the same kit and hidden seed on every worker (docs/batch.md)"
            )
        return _under_watchdog(job, progress)


def _grading_processes():
    """The multiprocessing context each submission's grading process is started from: forked by one forkserver per
    batch worker that has imported torch and nothing else (set_forkserver_preload), so a submission's grading process
    skips that import, about a quarter of its CPU seconds. The forkserver never grades: a grading process starts
    from the same state for every submission, as a fresh interpreter did."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["torch"])
    return context


def _under_watchdog(job: Job, progress: str | None) -> dict:
    from autograder.public.client import template
    from autograder.public.client.zygote import worker_environment

    limit = job.watchdog or default_watchdog()
    started = time.monotonic()
    # This process's template, lent to the grading process of each submission it grades: torch is imported once per
    # batch worker, not once per submission (a fresh one whenever its runtime copy changed: client.template).
    kept = template.current_template(worker_environment(Path(tempfile.gettempdir())))
    # The grading process's temporary folder, removed here once it has ended: one the watchdog killed leaves its
    # folders behind (its scratch folder with a copy of the hidden inputs, the submission it was given). The sandbox
    # user passes through it to its workers' folders, as through the machine's.
    with passable_folder("captionkit-grading-") as folder:
        data = _graded_in(folder, job, progress, kept, started + limit)
    if data is None:
        return _stopped(limit)
    status, value = pickle.loads(data)  # the grading process's own (student code never runs there)
    if status == "error":
        raise value
    return value


def _graded_in(folder: str, job: Job, progress: str | None, kept, deadline: float) -> bytes | None:
    """What the grading process of `job` wrote, with `folder` as its temporary folder and the template `kept` lent to
    it; None when `deadline` (time.monotonic()) came first, and it was ended then."""
    from autograder.public.client import template

    context = _grading_processes()
    result_read, result_write = context.Pipe(duplex=False)
    alive_read, alive_write = context.Pipe(duplex=False)  # the grading process ends when this one does
    child = context.Process(
        target=_child,
        args=(job, progress, limits.LIMITS, {**os.environ, "TMPDIR": folder}, result_write, alive_read, *kept.lend()),
        name=f"grading {job.id}",
    )
    try:
        child.start()
    finally:
        result_write.close()
        alive_read.close()
    data = None
    try:
        data = _read_until(result_read.fileno(), deadline)
    finally:  # on any way out without the result (an interrupt included), the grading process is ended
        result_read.close()
        if data is None:
            _end(child, kept.proc.pid)
        alive_write.close()
        child.join()
        if not data:  # ended without its result: it may have left a request half done, so a fresh template
            template.close_template()
    if data == b"":  # its traceback, if any, went to this process's standard error
        raise RuntimeError(f"the grading process ended without a result (exit status {child.exitcode})")
    return data


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything written to `fd` until its end, or None when `deadline` (time.monotonic()) comes first."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _end(child: multiprocessing.process.BaseProcess, template_pid: int) -> None:
    """Kill the grading process, what it started (each worker leads a session of its own), what the template forked
    for it (the template serves one grading process at a time) and every process of a sandbox user that no grader
    holds now."""
    from autograder.grader.sandbox_users import sweep_free_slots
    from autograder.public.client.processes import children_of

    forked = children_of(template_pid)
    started, level = list(forked), [child.pid, *forked]
    while level:
        level = [grandchild for pid in level for grandchild in children_of(pid)]
        started.extend(level)
    for pid in [child.pid, *started]:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
    child.join()
    sweep_free_slots()


def _stopped(seconds: float) -> dict:
    """What grade_job returns for a grade the watchdog ended."""
    text = (
        f"grader stopped after {seconds:.0f} s: grading this submission did not end in time; please tell the "
        "course staff"
    )
    return {
        "results": {"score": 0.0, "execution_time": round(seconds, 2), "output": text, "tests": []},
        "report": None,
        "staff": text,
        "stopped": True,
    }


def _child(job, progress, grading_limits, environment, result, alive, lent_control, lent) -> None:
    """The grading process of one submission (started by _under_watchdog, forked by the forkserver): grades `job`
    under `grading_limits` with the batch worker's `environment` as it is now, uses the batch worker's template
    (`lent_control`, `lent`: Template.lend), writes ("ok", outcome) or ("error", exception) to `result`, and ends
    when `alive` does (the batch worker is gone)."""
    os.setsid()  # a session of its own: the watchdog ends it and what it started together
    os.environ.clear()
    os.environ.update(environment)
    tempfile.tempdir = None  # read from TMPDIR again: the grading process's own folder (_under_watchdog)
    threading.Thread(target=_end_with, args=(alive,), daemon=True).start()
    from autograder.public.client import template

    template.adopt(lent_control, lent)  # this process forks its zygotes from the batch worker's template
    limits.LIMITS = grading_limits
    try:
        shown = None if progress is None else for_terminal(prefix=progress, position=1)
        outcome = ("ok", _grade_here(job, shown))
    except Exception as exc:  # noqa: BLE001 (reported in the submission's row by the coordinator)
        outcome = ("error", exc)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 (an exception that does not pickle travels as its text)
        data = pickle.dumps(("error", RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]}")))
    with os.fdopen(os.dup(result.fileno()), "wb") as f:
        f.write(data)
    result.close()
    # A multiprocessing child skips the exit handlers; this one runs them as an interpreter of its own would (the
    # temporary folders and a template of its own that its grade registered). Those the forkserver registered when it
    # imported torch run here too, as in a fresh interpreter that imported torch.
    atexit._run_exitfuncs()


def _end_with(alive) -> None:
    """End this process when `alive` ends: the process that started it is gone (a killed dask worker)."""
    try:
        while True:
            alive.recv_bytes()
    except (EOFError, OSError):
        os._exit(1)


def _grade_here(job: Job, progress=None) -> dict:
    """The grade itself, in this process."""
    from autograder.grader.engine import GradeOptions, grade
    from autograder.grader.results import gradescope_results

    with tempfile.TemporaryDirectory(prefix="captionkit-job-") as tmp:  # mode 0700: root's alone
        graded = grade(
            materialise(job.files, Path(tmp) / "submission"),
            GradeOptions(parts=job.parts, time_limit=limits.LIMITS.submission),
            progress=progress,
        )
    from autograder.grader.staff import staff_text

    report = None
    if job.report:
        from autograder.grader.report.html import render_report

        report = render_report(graded, submission=job.name or job.id, trained_figures=job.trained_figures)
    return {"results": gradescope_results(graded), "report": report, "staff": staff_text(graded, job.name or job.id)}
