"""A submission as a batch carries it: the Job (plain data: the submission's module files, the parts to grade, the
coordinator's kit fingerprint), made on the coordinator (`_prepare`) and recreated on a worker (`materialise`); the
fingerprint a worker compares with the coordinator's (`kit_fingerprint`); and where the jobs run (`executor`: inline,
a local process pool, or a dask.distributed cluster).
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import stat
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from autograder.grader.intake import Submission, unpack
from autograder.grader.intake import describe_error as describe_intake_error
from autograder.public import manifest
from shared.parts import MODULES

ROOT = Path(__file__).resolve().parents[2]
# Bytes of one module file a job carries: a larger file is refused by staging anyway (MAX_MODULE_BYTES), and its
# true size travels with it so that the refusal reads the same on every worker.
CARRIED_BYTES = 1024 * 1024 + 1


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


def kit_fingerprint() -> str:
    """A digest of what decides a grade on this machine: the kit's code and data files (the manifest's
    "fingerprint": the hidden seed's file and the golden data among them), the CAPTIONKIT_HIDDEN* variables that
    override them, and torch's version. Equal on the coordinator and a worker, or the worker refuses to grade.
    Cheap: it imports nothing heavy."""
    from importlib.metadata import version

    settings = sorted((k, v) for k, v in os.environ.items() if k.startswith("CAPTIONKIT_HIDDEN"))
    digest = hashlib.sha256(f"torch {version('torch')}\n{settings}\n".encode())
    for path in manifest.files("fingerprint", ROOT):
        digest.update(f"{path.relative_to(ROOT).as_posix()}\n".encode() + path.read_bytes())
    return digest.hexdigest()


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
