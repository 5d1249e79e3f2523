"""The code a worker runs from: a copy of the worker zone and shared/, never the kit's own folders."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from autograder.public import manifest

ROOT = manifest.ROOT
# The code a worker runs from, and nothing else: the worker zone and shared/ (no checks, no references, no hidden
# seed). A worker starts from a copy of them (copy_runtime), never from the kit's own folders.
RUNTIME_FILES = manifest.patterns("runtime")
# How the grader starts Python for a worker's program (the template or a zygote): no user site, no script folder on
# sys.path (-P, from Python 3.11; before it that folder holds the worker's own modules), no bytecode written, every cached
# bytecode file checked against its source, and a traceback on a fatal signal. Not -I or -E: they ignore the
# environment's PYTHONHASHSEED=0, and a submission that iterates over a set of strings would then see another order,
# and maybe get another score, in every grade. The environment is the grader's own (zygote.worker_environment).
WORKER_PYTHON_FLAGS = (
    "-s",
    *(["-P"] if sys.version_info >= (3, 11) else []),
    "-B",
    "--check-hash-based-pycs",
    "always",
    "-X",
    "faulthandler",
)


def copy_runtime(target: Path) -> Path:
    """Copy the worker's code (the manifest's "runtime") into `target`, world-readable (root-owned when run as
    root)."""
    for source in manifest.files("runtime"):
        destination = target / source.relative_to(ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        os.chmod(destination, 0o644)
    for folder in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        os.chmod(folder, 0o755)
    return target
