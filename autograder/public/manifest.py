"""What ships where: the kit's files by zone, and which zones each place that receives code takes.

Every place that copies or packs the kit's files reads its list here: the worker's runtime copy
(client.copy_runtime), the student handout and the nbgrader course's checker (instructor.handout), the Gradescope zip
(autograder.grader.gradescope), the fingerprint a batch's workers compare (autograder.grader.batch_jobs), and the
package data pyproject.toml installs (the kit's test_zones holds it equal to PACKAGE_DATA). A new file lands where
its zone goes, and a zone never lands where it must not (test_zones: no grader or solution file in the handout or the
runtime copy). The patterns name the kit's folders, most of which a handout lacks: none is a file to read.

Patterns are globs from the kit's root (pathlib's `**` included); matches are files only, never a bytecode cache.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Each zone's files (the kit's design document, "Three zones"). `project` is the kit's own description, needed where the kit is
# installed (the Gradescope image installs it from pyproject.toml).
ZONES: dict[str, tuple[str, ...]] = {
    "worker": ("autograder/__init__.py", "autograder/worker/**/*.py"),
    "public": ("autograder/public/**/*.py", "autograder/public/rubric.json", "autograder/public/golden/*.pt"),
    "grader": (
        "autograder/[_]_main__.py",  # the kit's command line, which grades (a glob of that one file)
        "autograder/grader/**/*.py",
        "autograder/grader/*.json",
        "autograder/grader/hidden/*.json",
        "autograder/grader/report/*.json",
        "autograder/grader/templates/*",
    ),
    "shared": ("shared/*.py",),
    "solutions": ("solutions/*.py",),
    "project": ("pyproject.toml", "README.md"),
}

# Which zones each destination takes, in the order it takes them.
DESTINATIONS: dict[str, tuple[str, ...]] = {
    # A worker's code (client.copy_runtime): what runs beside student code, no check, no reference, no hidden seed.
    "runtime": ("worker", "shared"),
    # The student handout's checker, and the nbgrader course's (instructor.handout.checker_files); of shared/ only the
    # modules these and the stubs import, and the golden files only once checked against the reference.
    "handout": ("worker", "public"),
    # The Gradescope autograder zip (autograder.grader.gradescope.source_files): the whole kit but its tests and tools.
    "gradescope": ("project", "shared", "solutions", "worker", "public", "grader"),
    # What decides a grade (autograder.grader.batch_jobs.kit_fingerprint): a batch's worker with other files refuses.
    "fingerprint": ("shared", "solutions", "worker", "public", "grader"),
}

# The files of the autograder package that are not Python (pyproject.toml's [tool.setuptools.package-data]).
PACKAGE_DATA = tuple(
    pattern.removeprefix("autograder/")
    for zone in ("worker", "public", "grader")
    for pattern in ZONES[zone]
    if pattern.startswith("autograder/") and not pattern.endswith(".py")
)


def patterns(destination: str) -> tuple[str, ...]:
    """The glob patterns of `destination` (a key of DESTINATIONS), zone by zone."""
    if destination not in DESTINATIONS:
        raise ValueError(f"destination: expected one of {sorted(DESTINATIONS)}, got {destination!r}")
    return tuple(pattern for zone in DESTINATIONS[destination] for pattern in ZONES[zone])


def files(destination: str, root: Path = ROOT) -> list[Path]:
    """The files under `root` that `destination` takes, pattern by pattern, each once, sorted within a pattern;
    never a bytecode cache or a hidden file."""
    found: dict[Path, None] = {}
    for pattern in patterns(destination):
        for path in sorted(root.glob(pattern)):
            parts = path.relative_to(root).parts
            if path.is_file() and not any(p == "__pycache__" or p.startswith(".") for p in parts):
                found.setdefault(path, None)
    return list(found)
