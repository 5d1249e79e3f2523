"""The code a worker runs from: a copy of the worker zone and shared/, never the kit's own folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# The code a worker runs from, and nothing else: the worker zone and shared/ (no checks, no references, no hidden
# seed). A worker starts from a copy of them (copy_runtime), never from the kit's own folders.
RUNTIME_FILES = ("autograder/__init__.py", "autograder/worker/**/*.py", "shared/*.py")


def copy_runtime(target: Path) -> Path:
    """Copy the worker's code (RUNTIME_FILES) into `target`, world-readable (root-owned when run as root)."""
    for pattern in RUNTIME_FILES:
        for source in sorted(ROOT.glob(pattern)):
            destination = target / source.relative_to(ROOT)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
            os.chmod(destination, 0o644)
    for folder in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        os.chmod(folder, 0o755)
    return target
