"""Another commit of the kit checked out beside this tree, for a benchmark that measures both in one run."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A detached git worktree of `ref`, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="benchmark-baseline-") as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)


def environment() -> dict[str, str]:
    """This process's environment, with the encoder outputs cached in this tree shared by both trees (a worktree of its
    own would pretrain the encoder first: no part of a grade's usual cost)."""
    return {**os.environ, "CAPTIONKIT_CACHE": os.environ.get("CAPTIONKIT_CACHE", str(ROOT / ".cache" / "captionkit"))}
