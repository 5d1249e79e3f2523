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
    """Copy submission/<module>.py to a fresh `staging` folder and return that folder.

    The file is opened without following a link (O_NOFOLLOW) and checked on the open descriptor, so a link put in
    its place between a check and the open is refused, never followed."""
    source = Path(submission) / f"{module}.py"
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StagingError(f"{module}.py is missing from the submission") from None
    except OSError as exc:
        if os.path.islink(source):  # ELOOP: the name is a symbolic link
            raise StagingError(f"{module}.py is a symbolic link; submit the file itself") from None
        raise StagingError(f"{module}.py could not be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StagingError(f"{module}.py is not a regular file")
        if info.st_size > MAX_MODULE_BYTES:
            raise StagingError(f"{module}.py is {info.st_size} bytes; the limit is {MAX_MODULE_BYTES}")
        with os.fdopen(os.dup(fd), "rb") as src:
            data = src.read(MAX_MODULE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_MODULE_BYTES:
        raise StagingError(f"{module}.py is over {MAX_MODULE_BYTES} bytes")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    (staging / f"{module}.py").write_bytes(data)
    return staging
