"""Stage one part's module for a worker: copy <module>.py alone into a fresh folder.

Nothing else the student sent comes along: no __pycache__, no other files, no links. A missing
module, a link, a non-file or an oversized file is refused with a one-line reason.
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

MAX_MODULE_BYTES = 1024 * 1024


class StagingError(Exception):
    """The submission's module cannot be staged; the message is one line for the student."""


def stage(module: str, submission: Path, staging: Path) -> Path:
    """Copy submission/<module>.py to a fresh `staging` folder and return that folder."""
    source = Path(submission) / f"{module}.py"
    try:
        info = os.lstat(source)
    except FileNotFoundError:
        raise StagingError(f"{module}.py is missing from the submission") from None
    if stat.S_ISLNK(info.st_mode):
        raise StagingError(f"{module}.py is a symbolic link; submit the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise StagingError(f"{module}.py is not a regular file")
    if info.st_size > MAX_MODULE_BYTES:
        raise StagingError(f"{module}.py is {info.st_size} bytes; the limit is {MAX_MODULE_BYTES}")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    target = staging / f"{module}.py"
    with open(source, "rb") as src, open(target, "wb") as dst:
        dst.write(src.read(MAX_MODULE_BYTES + 1))
    return staging
