"""Install what the captioning assignment needs into the Python that runs this script.

    python install.py              (on Colab, in a cell: !python install.py)
    python install.py --dry-run    print what it would install, install nothing

Only what is missing is installed; a package already there is left as it is (on Colab: its torch, numpy and
Jupyter), with a note when it is older than the version the assignment was tested with. Where torch is missing it
comes first, as a CPU-only build from PyTorch's CPU index: a plain `pip install torch` on Linux pulls a CUDA build of
several GB, and the assignment runs on a CPU. Then the rest, from requirements.txt beside this file.
Environment: TORCH_CPU_INDEX (default https://download.pytorch.org/whl/cpu).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import subprocess
import sys
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement

HERE = Path(__file__).resolve().parent
TORCH_CPU_INDEX = os.environ.get("TORCH_CPU_INDEX", "https://download.pytorch.org/whl/cpu")


def requirements(path: Path = HERE / "requirements.txt") -> list[Requirement]:
    """The requirements of `path` that apply to this machine (their markers hold), in the file's order."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate():
                found.append(requirement)
    return found


def installed_version(name: str) -> str | None:
    """The installed version of the distribution `name`, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def plan(wanted: list[Requirement]) -> tuple[list[list[str]], list[str]]:
    """(the pip commands to run, notes on what is already installed): torch first if it is missing (CPU build,
    except on macOS, where PyPI's build has no CUDA), then every other missing requirement in one command."""
    pip = [sys.executable, "-m", "pip", "install"]
    commands, notes, missing = [], [], []
    for requirement in wanted:
        version = installed_version(requirement.name)
        if version is None:
            missing.append(requirement)
        elif not requirement.specifier.contains(version, prereleases=True):
            notes.append(f"{requirement.name} {version} is installed; the assignment was tested with "
                         f"{requirement.name}{requirement.specifier}: if something fails, upgrade it")
        else:
            notes.append(f"{requirement.name} {version} is installed")
    torch = [r for r in missing if r.name == "torch"]
    if torch:
        index = [] if sys.platform == "darwin" else ["--index-url", TORCH_CPU_INDEX]
        commands.append([*pip, *index, str(torch[0])])
    rest = [str(r) for r in missing if r.name != "torch"]
    if rest:
        commands.append([*pip, *rest])
    return commands, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install what the assignment needs (only what is missing).")
    parser.add_argument("--dry-run", action="store_true", help="print what would be installed; install nothing")
    args = parser.parse_args(argv)
    commands, notes = plan(requirements())
    for note in notes:
        print(note)
    if not commands:
        print("install: everything the assignment needs is installed")
        return 0
    for command in commands:
        print(("would run: " if args.dry_run else "running: ") + shlex.join(command), flush=True)
        if not args.dry_run and subprocess.run(command).returncode != 0:
            print("install: pip failed (its message is above); nothing else was installed")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
