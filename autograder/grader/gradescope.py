"""Gradescope: build the autograder zip, and the entry point `run_autograder` calls.

    python -m autograder gradescope-zip --out autograder.zip [--seed N]
    python -m autograder gradescope-run [--root /autograder]      (inside the container)

The zip holds `setup.sh` and `run_autograder` (autograder/grader/templates/) at its root beside the kit's source (Gradescope extracts it
into /autograder/source and copies run_autograder to /autograder). On Gradescope's default
image (Ubuntu 22.04) setup.sh installs a CPU-only torch and the kit into /autograder/venv, creates the
sandbox user, makes the source, the reference solutions, the checks and the hidden seed readable by root
only, and builds the hidden data's encoder cache once. run_autograder writes a valid placeholder
results.json first, then grades /autograder/submission (loose files, or one zip of them) and replaces
the placeholder atomically; if Python itself dies, the placeholder says so.

Visibility: public checks are "visible" at once; hidden checks are "after_due_date", and top-level
output lists each part's total, so students see what the public checks earned right away and
everything after the due date (Gradescope hides the total while any test is "hidden", so none is).
The staff view (autograder/grader/staff.py: every failed check's case and traceback) is printed to
run_autograder's stdout, which Gradescope shows to instructors only ("stdout_visibility": "hidden").
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import random
import stat
import tempfile
import time
import zipfile
from pathlib import Path

from autograder.grader import templates
from autograder.public import manifest

ROOT = Path(__file__).resolve().parents[2]
# The installable kit, without tests, notebooks, generated stubs or the instructor's tools.
SOURCE_FILES = manifest.patterns("gradescope")
TORCH_VERSION = "2.13.0"


def hypothesis_version() -> str:
    """The hypothesis release of the environment building the zip: the image installs the same one, because the
    cases every property check draws (public and hidden rounds) are derived by hypothesis's own algorithm, which
    moves between releases. An image rebuilt next month then grades an unchanged submission on the same cases."""
    return importlib.metadata.version("hypothesis")


def _add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def source_files(root: Path = ROOT) -> list[Path]:
    """The files of `root` the zip holds (autograder/public/manifest.py, "gradescope"), in order: files only, never
    Python's bytecode cache (a `templates/__pycache__` appears wherever the kit ran without PYTHONDONTWRITEBYTECODE)."""
    return manifest.files("gradescope", root)


def build_zip(out: Path, seed: int | None = None) -> Path:
    """Write the autograder zip to `out`. `seed` replaces the hidden data seed in the zip's copy, and a fresh
    hidden test secret comes with it."""
    from autograder.grader.context import new_test_secret

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        _add(
            zf,
            "setup.sh",
            templates.render("setup.sh", TORCH_VERSION=TORCH_VERSION, HYPOTHESIS_VERSION=hypothesis_version()).encode(),
            0o755,
        )
        _add(zf, "run_autograder", templates.render("run_autograder").encode(), 0o755)
        for path in source_files():
            rel = path.relative_to(ROOT).as_posix()
            data = path.read_bytes()
            if rel == "autograder/grader/hidden/seed.json" and seed is not None:  # a course's own: both secrets anew
                data = json.dumps({"seed": seed, "test_secret": new_test_secret()}).encode()
            _add(zf, rel, data, 0o644)
    Path(out).write_bytes(buffer.getvalue())
    return Path(out)


def run(root: Path) -> int:
    """Grade root/submission into root/results/results.json (inside the container), in a process of its own
    under a wall-clock watchdog (the submission's time limit, autograder.public.limits): past it, that process is
    killed, the sandbox users are swept, and results.json says that grading stopped."""
    import multiprocessing

    from autograder.grader.isolation import sweep_free_slots
    from autograder.grader.results import write_json_atomic
    from autograder.public.client import template
    from autograder.public.client.disk import passable_folder
    from autograder.public.limits import LIMITS

    limit = LIMITS.seconds(LIMITS.submission)
    # After the command's clean start (autograder/grader/clean_start.py) this process holds torch and the template it
    # forked, and nothing of the submission: the grading process is forked from it and uses both. Otherwise (called as
    # a library) the grading process is a fresh interpreter.
    inherit = template.forked_here()
    context = multiprocessing.get_context("fork" if inherit else "spawn")
    # The grading process's temporary folder, removed here once it has ended: one the watchdog killed leaves its
    # folders behind (its scratch folder with a copy of the hidden inputs, the submission it unpacked). The sandbox
    # user passes through it to its workers' folders, as through the machine's.
    with passable_folder("captionkit-grading-") as folder:
        process = context.Process(target=_graded_in_child, args=(Path(root), inherit, folder))
        process.start()
        process.join(limit)
        stopped = process.is_alive()
        if stopped:
            process.kill()
            process.join()
            sweep_free_slots()
    if stopped:
        write_json_atomic(
            {
                "score": 0,
                "execution_time": round(limit, 2),
                "tests": [],
                "output": f"The autograder stopped: grading took longer than {limit:.0f} s; please tell "
                "the course staff.",
            },
            Path(root) / "results" / "results.json",
        )
        print(f"grading passed its time limit of {limit:.0f} s")
        return 1
    if process.exitcode != 0:  # the child writes results.json last: without it, the placeholder would stay
        write_json_atomic(
            {
                "score": 0,
                "execution_time": 0,
                "tests": [],
                "output": f"The autograder failed (exit status {process.exitcode}); please tell the course staff.",
            },
            Path(root) / "results" / "results.json",
        )
    return process.exitcode


def _graded_in_child(root: Path, inherit: bool = False, folder: str | None = None) -> None:
    """The grading itself (the watchdog's child process): exits 0 once results.json is written. `inherit`: forked
    from a process that holds its template, which it uses (client.template.inherit). `folder`: its temporary folder
    (run removes it)."""
    import sys

    if folder is not None:
        os.environ["TMPDIR"] = folder
        tempfile.tempdir = None  # read from TMPDIR again
    from autograder.public.client import template

    if inherit:
        template.inherit()

    from autograder.grader.engine import grade
    from autograder.grader.results import gradescope_results, write_json_atomic
    from autograder.grader.staff import staff_text

    results = root / "results" / "results.json"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="captionkit-submission-") as tmp:
        try:
            folder = _submitted_folder(root / "submission", Path(tmp))
        except _Unreadable as exc:  # nothing to grade: 0, and why
            write_json_atomic(
                {"score": 0.0, "execution_time": round(time.monotonic() - started, 2), "tests": [], "output": str(exc)},
                results,
            )
            print(f"not graded: {exc}")
            return
        report = grade(folder)
    document = gradescope_results(report)
    document["execution_time"] = round(time.monotonic() - started, 2)
    write_json_atomic(document, results)
    print(f"graded: {report.score:g} / {report.max_score:g}")
    # The staff view goes to run_autograder's stdout, which only instructors see ("stdout_visibility": "hidden").
    print(staff_text(report, "this submission"))
    sys.stdout.flush()


class _Unreadable(Exception):
    """The submission cannot be read; the message says why, for results.json."""


def _submitted_folder(submission: Path, scratch: Path) -> Path:
    """The folder holding the submitted modules: loose files, or the one zip uploaded, extracted under `scratch`.
    Raises _Unreadable for whatever reading them raises (a bad or unsafe zip, a name the file system refuses)."""
    from autograder.grader.intake import Submission, describe_error, module_folder, unpack

    zips = []
    try:
        zips = sorted(submission.glob("*.zip"))
        folder = module_folder(submission)
        if not any((folder / f"{m}.py").exists() for m in _modules()) and len(zips) == 1:
            folder = unpack(Submission("upload", "", zips[0]), scratch)
    except Exception as exc:  # noqa: BLE001 (a submission that cannot be read gets 0 and the reason)
        what = zips[0].name if len(zips) == 1 else "the submission"
        raise _Unreadable(f"could not read {what}: {describe_error(exc)}") from None
    return folder


def _modules():
    from shared.parts import MODULES

    return MODULES


def new_seed() -> int:
    """A fresh hidden data seed for a course's zip."""
    return random.SystemRandom().randrange(10**6, 10**9)
