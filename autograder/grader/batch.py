"""`python -m autograder batch SUBMISSIONS --out DIR [--jobs N | --scheduler ADDRESS] [--part P ...] [--force]
[--reports]`: grade a whole class.

Writes DIR/<id>/results.json for every submission (Gradescope's format), DIR/staff/<id>.txt (the staff view:
each failed check's case and traceback, autograder/grader/staff.py; in a folder of its own, so that a submission's
folder can be handed out), DIR/grades.csv (one row per
submission, one column per part), DIR/histograms.png (the score distribution of every part) and
DIR/summary.html (distributions, the checks failed most often, every submission; autograder/grader/report/summary.py).
With --reports, also DIR/<id>/report.html, the feedback report of each submission (autograder/grader/report/html.py).
A run that stops part-way resumes where it stopped: a submission with a results.json (and, with --reports, a
report.html) is not graded again unless --force. One broken submission never stops the batch: it gets a row
saying why. --part P regrades only part P of the submissions graded before and merges the new results into
their results.json (a submission not graded before is graded in full).

How a submission travels (docs/batch.md): this process (the coordinator) reads each submission's module files
into a `Job`, plain data; `grade_job(job)`, one call per submission, grades it on a worker (inline with --jobs 1,
in a local process pool with --jobs N, on any machine of a dask.distributed cluster with --scheduler) and returns
the documents to write; only the coordinator writes into DIR. A worker needs the kit and the hidden seed
installed, never the submissions folder or DIR.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from autograder.grader.grades_table import (
    GRADES_CSV,
    HISTOGRAMS,
    MAXIMA_CSV,
    maxima,
    owner_only,
    row_from_results,
    write_csv,
)
from autograder.grader.intake import Submission, discover, unpack
from autograder.grader.intake import describe_error as describe_intake_error
from autograder.public import limits
from autograder.public.progress import for_terminal
from shared.parts import MODULES, PARTS

ROOT = Path(__file__).resolve().parents[2]
# Bytes of one module file a job carries: a larger file is refused by staging anyway (MAX_MODULE_BYTES), and its
# true size travels with it so that the refusal reads the same on every worker.
CARRIED_BYTES = 1024 * 1024 + 1


# -- one submission, on a worker -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to grade one submission, as plain data.

    files: module file name -> ("file", first CARRIED_BYTES bytes, true size) | ("link",) | ("other",): the
    submission's module files as the staging step will find them (a link or a folder is refused there, with the
    same message as in a local grade). parts: the parts to grade (None: all). kit: kit_fingerprint() of the
    coordinator, so that a worker with another version of the kit or another hidden seed refuses to grade."""

    id: str
    name: str
    files: dict
    parts: tuple[str, ...] | None
    report: bool
    kit: str
    watchdog: float | None = None  # wall-clock seconds the grade may take (None: default_watchdog())
    trained_figures: bool = True  # the report with the figures of the trained models (html.WITHOUT_TRAINED_FIGURES)


class KitMismatch(RuntimeError):
    """The worker's kit (code, hidden seed or torch) is not the coordinator's: its grades would differ."""


def snapshot(folder: Path) -> dict:
    """The module files of a submission folder as Job.files (links are not followed)."""
    files = {}
    for module in MODULES:
        path = Path(folder) / f"{module}.py"
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            files[path.name] = ("link",)
        elif stat.S_ISREG(info.st_mode):
            with open(path, "rb") as f:
                files[path.name] = ("file", f.read(CARRIED_BYTES), info.st_size)
        else:
            files[path.name] = ("other",)
    return files


def materialise(files: dict, folder: Path) -> Path:
    """Recreate Job.files in the new folder `folder`; return it."""
    folder.mkdir(mode=0o700)
    for name, entry in files.items():
        if name not in {f"{m}.py" for m in MODULES}:
            raise ValueError(f"materialise: {name!r} is not a module file name")
        path = folder / name
        if entry[0] == "file":
            path.write_bytes(entry[1])
            if entry[2] > len(entry[1]):
                os.truncate(path, entry[2])  # sparse: staging reads the true size and refuses the file
        elif entry[0] == "link":
            path.symlink_to("a-symbolic-link-in-the-submission")
        else:
            path.mkdir()
    return folder


_KIT_FILES = ("autograder/**/*.py", "autograder/**/*.json", "shared/*.py", "solutions/*.py")


def kit_fingerprint() -> str:
    """A digest of what decides a grade on this machine: the kit's code and data files (the hidden seed's file
    among them), the CAPTIONKIT_HIDDEN* variables that override them, and torch's version. Equal on the
    coordinator and a worker, or the worker refuses to grade. Cheap: it imports nothing heavy."""
    from importlib.metadata import version

    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("CAPTIONKIT_HIDDEN"))
    digest = hashlib.sha256(f"torch {version('torch')}\n{settings}\n".encode())
    for pattern in _KIT_FILES:
        for path in sorted(ROOT.glob(pattern)):
            if "__pycache__" not in path.parts:
                digest.update(f"{path.relative_to(ROOT).as_posix()}\n".encode() + path.read_bytes())
    return digest.hexdigest()


_KIT = None
# One grade at a time per process: a grading run holds this process's sandbox user (sandbox/isolation.py), and
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


# The child's program: reads (job, progress, time limits) from the file named first, writes ("ok", outcome) or ("error", exception)
# to the descriptor named second; ends when its standard input does (the process that started it is gone).
_CHILD = (
    "import sys; sys.path.insert(0, sys.argv[1]); from autograder.grader.batch import _child; "
    "_child(sys.argv[2], int(sys.argv[3]))"
)


def _under_watchdog(job: Job, progress: str | None) -> dict:
    limit = job.watchdog or default_watchdog()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="captionkit-job-") as tmp:  # mode 0700: root's alone
        job_file = Path(tmp) / "job.pickle"
        job_file.write_bytes(pickle.dumps((job, progress, limits.LIMITS)))  # the limits this process grades under
        read_end, write_end = os.pipe()
        try:
            child = subprocess.Popen(
                [sys.executable, "-c", _CHILD, str(ROOT), str(job_file), str(write_end)],
                stdin=subprocess.PIPE,
                pass_fds=(write_end,),
                start_new_session=True,
            )
        finally:
            os.close(write_end)
        data = None
        try:
            data = _read_until(read_end, started + limit)
        finally:  # on any way out without the result (an interrupt included), the grading process is ended
            os.close(read_end)
            if data is None:
                _end(child)
            child.stdin.close()
            child.wait()
    if data is None:
        return _stopped(limit)
    if not data:  # its traceback, if any, went to this process's standard error
        raise RuntimeError(f"the grading process ended without a result (exit status {child.returncode})")
    status, value = pickle.loads(data)  # the grading process's own (student code never runs there)
    if status == "error":
        raise value
    return value


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


def _end(child: subprocess.Popen) -> None:
    """Kill the grading process, what it started (each worker leads a session of its own) and every process of a
    sandbox user that no grader holds now."""
    from autograder.grader.isolation import sweep_free_slots
    from autograder.public.client.processes import children_of

    started, level = [], [child.pid]
    while level:
        level = [grandchild for pid in level for grandchild in children_of(pid)]
        started.extend(level)
    for pid in [child.pid, *started]:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)
    child.wait()
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


def _child(job_file: str, result_fd: int) -> None:
    """The grading process of one submission (started by _under_watchdog)."""
    threading.Thread(target=_end_with_stdin, daemon=True).start()
    job, progress, limits.LIMITS = pickle.loads(Path(job_file).read_bytes())
    try:
        shown = None if progress is None else for_terminal(prefix=progress, position=1)
        outcome = ("ok", _grade_here(job, shown))
    except Exception as exc:  # noqa: BLE001 (reported in the submission's row by the coordinator)
        outcome = ("error", exc)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 (an exception that does not pickle travels as its text)
        data = pickle.dumps(("error", RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]}")))
    with os.fdopen(result_fd, "wb") as f:
        f.write(data)


def _end_with_stdin() -> None:
    """End this process when its standard input ends: the process that started it is gone (a killed dask worker)."""
    while os.read(0, 4096):
        pass
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


# -- the class, on the coordinator ----------------------------------------------------------------------------


def write_histograms(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from autograder.grader.results import was_graded

    top = maxima()
    fig, axes = plt.subplots(2, 4, figsize=(13, 5.5))
    for ax, column in zip(axes.flat, [p.module for p in PARTS] + ["total"]):
        values = [float(r.get(column, 0.0)) for r in rows if was_graded(r)]
        # On [0, the column's maximum] whatever the scores (all zero included), bars outlined so neighbours show.
        ax.hist(
            values,
            bins=min(20, max(5, int(top[column]))),
            range=(0, top[column]),
            color="#2980b9",
            edgecolor="white",
            linewidth=0.8,
        )
        ax.set_xlim(0, top[column])
        ax.set_title(f"{column} (of {top[column]:g})", fontsize=9)
        ax.set_xlabel("points")
    fig.suptitle(f"Score distribution per part ({len(rows)} submissions)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _graded_tests(out: Path, submission: Submission) -> list | None:
    """The tests of the submission's results.json; None without one (or when it cannot be read, or holds no object
    with a list of tests: graded in full again)."""
    try:
        document = json.loads((out / submission.id / "results.json").read_text())
    except (OSError, ValueError):
        return None
    tests = document.get("tests") if isinstance(document, dict) else None
    return tests if isinstance(tests, list) else None


def _done(out: Path, submission: Submission, reports: bool) -> bool:
    """Graded before: a results.json, and with `reports` a report.html unless the submission was unreadable."""
    results = out / submission.id / "results.json"
    if not results.exists():
        return False
    if not reports or (out / submission.id / "report.html").exists():
        return True
    return _graded_tests(out, submission) == []  # unreadable: there is nothing to report


def _prepare(
    submission: Submission,
    parts: tuple[str, ...] | None,
    reports: bool,
    kit: str,
    watchdog: float | None = None,
    trained_figures: bool = True,
) -> Job | str:
    """The submission's Job, or the reason it cannot be read (a bad zip, an unsafe path, a name the file system
    refuses, an entry zipfile cannot extract: whatever reading it raised)."""
    with tempfile.TemporaryDirectory(prefix="captionkit-intake-") as tmp:
        try:
            files = snapshot(unpack(submission, Path(tmp)))
        except Exception as exc:  # noqa: BLE001 (a submission that cannot be read costs only its own grade)
            return describe_intake_error(exc)
    return Job(submission.id, submission.name, files, parts, reports, kit, watchdog, trained_figures)


def _store(out: Path, submission: Submission, outcome: dict, merge: tuple[str, ...] | None = None) -> None:
    """Write what grade_job returned into out/<id>/; with `merge`, into the results.json graded before."""
    from autograder.grader.results import merge_results, write_json_atomic
    from autograder.grader.staff import STAFF_FILE, batch_staff_path, merged_text, write_staff

    folder = out / submission.id
    staff_path = batch_staff_path(out, submission.id)
    # Where a batch of an earlier kit wrote the staff view, beside the student's report: read for a merge, removed.
    legacy = folder / STAFF_FILE
    document = outcome["results"]
    staff = outcome.get("staff")
    if merge and not outcome.get("stopped"):  # a grade the watchdog stopped replaces the results: nothing to merge
        old = json.loads((folder / "results.json").read_text())
        document = merge_results(old, document, merge)
        earlier = staff_path if staff_path.is_file() else legacy
        if staff is not None and earlier.is_file():
            staff = merged_text(earlier.read_text(encoding="utf-8"), staff, merge)
        # The report drew every part from one run; it no longer matches (`batch --reports` grades it afresh).
        (folder / "report.html").unlink(missing_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    owner_only(folder)
    if outcome.get("report") is not None:
        (folder / "report.html").write_text(outcome["report"], encoding="utf-8")
        owner_only(folder / "report.html")
    if staff is not None:
        write_staff(staff, staff_path)
        owner_only(staff_path.parent)
        legacy.unlink(missing_ok=True)
    write_json_atomic(document, folder / "results.json")  # mkstemp: 0600


def _unreadable(out: Path, submission: Submission, reason: str) -> None:
    from autograder.grader.results import write_json_atomic

    document = {"score": 0.0, "execution_time": 0, "output": f"could not read the submission: {reason}", "tests": []}
    write_json_atomic(document, out / submission.id / "results.json")


@contextlib.contextmanager
def executor(jobs: int, scheduler: str | None):
    """Where grade_job runs: None (inline, --jobs 1), a local process pool of `jobs` processes, or the
    dask.distributed cluster whose scheduler listens at `scheduler` (the optional extra `.[cluster]`)."""
    if scheduler:
        try:
            from distributed import Client
        except ImportError:
            raise ValueError(
                '--scheduler needs dask.distributed: pip install -e ".[cluster]" (docs/batch.md)'
            ) from None
        with Client(scheduler, timeout="30s") as client:
            yield client.get_executor(pure=False)
    elif jobs <= 1:
        yield None
    else:
        # "spawn", not fork: each process starts clean, claims its own sandbox user, inherits no grader state.
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            yield pool


def batch_outputs() -> tuple[str, ...]:
    """What a batch writes in its output folder beside the submissions' folders DIR/<id>/: its tables and summary,
    the staff views' folder, and what `--similarity` and `--gradebook` add."""
    from autograder.grader.gradebook import FORMATS, gradebook_file
    from autograder.grader.report.summary import SUMMARY
    from autograder.grader.similarity import REPORT, TABLE
    from autograder.grader.staff import STAFF_FOLDER

    return (
        GRADES_CSV,
        MAXIMA_CSV,
        HISTOGRAMS,
        SUMMARY,
        STAFF_FOLDER,
        REPORT,
        TABLE,
        *(gradebook_file(fmt) for fmt in FORMATS),
    )


def held_back(submissions: list[Submission]) -> dict[Submission, str]:
    """The submissions a batch cannot grade into a folder of their own, with why: an id that is the name of one of
    the batch's own outputs, or an id two submissions share (bob/ and bob.zip); names compared as a file system
    that ignores case would (a TA's laptop). Each costs only its own grade: its row says why, the rest is graded."""
    reserved = {name.casefold(): name for name in batch_outputs()}
    by_id: dict[str, list[Submission]] = {}
    for s in submissions:
        by_id.setdefault(s.id.casefold(), []).append(s)
    held = {}
    for s in submissions:
        same = by_id[s.id.casefold()]
        if s.id.casefold() in reserved:
            held[s] = (
                f"the id {s.id!r} is the name of the batch's own {reserved[s.id.casefold()]!r} in the output "
                "folder: rename this submission's folder or zip and run the batch again"
            )
        elif len(same) > 1:
            held[s] = (
                f"{len(same)} submissions share the id {s.id!r} ({', '.join(x.source.name for x in same)}): "
                "keep one, or give each its own name, and run the batch again"
            )
    return held


def run(
    submissions_root: Path,
    out: Path,
    jobs: int = 1,
    force: bool = False,
    reports: bool = False,
    parts: tuple[str, ...] | None = None,
    scheduler: str | None = None,
    watchdog: float | None = None,
    trained_figures: bool = True,
) -> list[dict]:
    """Grade every submission under `submissions_root` into `out`; return the grades.csv rows. reports: also write
    each submission's feedback report. parts: regrade only these parts of the submissions graded before (merged
    into their results.json). scheduler: the address of a dask.distributed scheduler to grade on. watchdog: the
    wall-clock seconds one submission's grade may take before it is ended (default: default_watchdog()).
    trained_figures=False: the reports leave out the figures of the trained models."""
    if watchdog is not None and not watchdog > 0:
        raise ValueError(f"watchdog: expected a positive number of seconds, got {watchdog!r}")
    watchdog = watchdog or default_watchdog()
    if parts and (force or reports):
        raise ValueError(
            "--part regrades parts of graded submissions and merges the results: it goes without "
            "--force (which regrades whole submissions) and --reports (a report draws every part from "
            "one run: use --reports --force)"
        )
    out.mkdir(parents=True, exist_ok=True)
    # The class's submissions and their results are the staff's alone: no worker may reach a classmate's.
    for folder in (Path(submissions_root), out):
        if folder.is_dir() and folder.stat().st_uid == os.geteuid():
            owner_only(folder)
    submissions = discover(submissions_root)
    from autograder.grader.staff import batch_staff_path

    held = held_back(submissions)
    # With `parts`: the parts to regrade and merge, per submission graded before (the others are graded in full).
    merge = {s.id: tuple(parts) for s in submissions if parts and s not in held and _graded_tests(out, s)}
    todo = [s for s in submissions if s not in held and (force or parts or not _done(out, s, reports))]
    if force:
        for s in todo:
            shutil.rmtree(out / s.id, ignore_errors=True)
            batch_staff_path(out, s.id).unlink(missing_ok=True)
    failures: dict[str, str] = {}

    def finish(s: Submission, outcome) -> None:
        """Store what grading `s` returned (outcome() gives it or raises); a failure goes in its row."""
        try:
            _store(out, s, outcome(), merge.get(s.id))
        except Exception as exc:  # noqa: BLE001 (never let one submission stop the batch)
            failures[s.id] = f"{type(exc).__name__}: {exc}"[:300]

    kit = kit_fingerprint()
    with (
        executor(jobs, scheduler) as pool,
        tqdm(total=len(submissions), initial=len(submissions) - len(todo), unit="submission") as bar,
    ):
        futures = {}
        for s in todo:
            job = _prepare(s, merge.get(s.id), reports, kit, watchdog, trained_figures)
            if isinstance(job, str):
                _unreadable(out, s, job)
                bar.update()
            elif pool is None:  # --jobs 1: a second bar (or a line per part) says where this submission is
                finish(s, lambda job=job, s=s: grade_job(job, progress=f"{s.id}: "))
                bar.update()
            else:
                futures[pool.submit(grade_job, job)] = s
        for future in as_completed(futures):
            finish(futures[future], future.result)
            bar.update()
    rows = []
    for s in submissions:
        results = out / s.id / "results.json"
        if s in held:
            rows.append({"id": s.id, "name": s.name, "status": f"not graded: {held[s]}"})
        elif results.exists() and s.id not in failures:
            rows.append(row_from_results(s, results))
        else:
            rows.append({"id": s.id, "name": s.name, "status": f"grader error: {failures.get(s.id, 'no results')}"})
    write_csv(rows, out / GRADES_CSV)
    write_histograms(rows, out / HISTOGRAMS)
    from autograder.grader.report import write_summary

    write_summary(rows, out)
    for path in out.iterdir():
        if path.is_file():
            owner_only(path)
    return rows
