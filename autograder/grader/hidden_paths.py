"""What the sandbox user must never read (HIDDEN_PATHS, the oracle packages' folders), and making it root's alone
(`protect_hidden`: at install time, and when a grader finds a sandbox user to switch to).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# What the sandbox user must never read: reference solutions, checks (hidden properties), the hidden seed,
# the kit's tests (they hold edited references) and the repository's history.
HIDDEN_PATHS = ("solutions", "autograder/grader/checks", "autograder/grader/hidden", "tests", "instructor", ".git")


# Packages the grader uses as independent oracles (BLEU): a worker that imported them could hand the check the
# oracle's own answer. The grader (root) still imports them; the sandbox user cannot read them.
ORACLE_PACKAGES = ("nltk", "pycocoevalcap")


def oracle_folders() -> list[Path]:
    """The installed folders of the oracle packages (those that are installed)."""
    import importlib.util

    folders = []
    for name in ORACLE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders += [Path(p) for p in spec.submodule_search_locations]
    return folders


def protect_hidden(root: Path = ROOT) -> list[str]:
    """Make every hidden path under `root`, and the oracle packages, readable by their owner only (root).
    Returns the paths changed."""
    changed = []
    for path in [*(root / rel for rel in HIDDEN_PATHS), *oracle_folders()]:
        if path.exists() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
            changed.append(str(path))
    return changed
