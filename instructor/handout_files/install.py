"""Install what the captioning assignment needs into the Python that runs this script.

    python install.py              (on Colab, in a cell: !python install.py)
    python install.py --dry-run    print what it would install, install nothing

Only what is missing is installed; a package already there is left as it is (on Colab: its torch, numpy and
Jupyter), with a note when it is older than the version the assignment was tested with. Where torch is missing it
comes first, as a CPU-only build from PyTorch's CPU index: a plain `pip install torch` on Linux pulls a CUDA build of
several GB, and the assignment runs on a CPU. When that index does not answer within a few seconds (a network that
blocks it, a mirror only), torch comes from the index pip is configured with instead, and a line says so. Then the
rest, from requirements.txt beside this file. pip's own output is shown only when it fails (its last lines).
Environment: TORCH_CPU_INDEX (default https://download.pytorch.org/whl/cpu).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement

HERE = Path(__file__).resolve().parent
TORCH_CPU_INDEX = os.environ.get("TORCH_CPU_INDEX", "https://download.pytorch.org/whl/cpu")
PROBE_SECONDS = 5  # how long the CPU index may take to answer before torch comes from pip's configured index


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
            notes.append(
                f"{requirement.name} {version} is installed; the assignment was tested with "
                f"{requirement.name}{requirement.specifier}: if something fails, upgrade it"
            )
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


def reachable(index: str, seconds: float = PROBE_SECONDS) -> bool:
    """Whether the package index `index` serves torch's page within `seconds`."""
    try:
        with urllib.request.urlopen(index.rstrip("/") + "/torch/", timeout=seconds):
            return True
    except (OSError, ValueError):  # refused, timed out, no route, no such host, a malformed URL
        return False


def without_cpu_index(command: list[str]) -> list[str]:
    """`command` with its `--index-url TORCH_CPU_INDEX` left out: pip then uses the index it is configured with."""
    at = command.index("--index-url")
    return command[:at] + command[at + 2 :]


def run_pip(command: list[str]) -> str | None:
    """Run a pip command quietly (no retry warnings, no progress); None when it succeeds, else pip's reason: its last
    error line (or its last line)."""
    done = subprocess.run([*command, "--quiet"], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [f"pip exited with status {done.returncode}"])[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install what the assignment needs (only what is missing).")
    parser.add_argument("--dry-run", action="store_true", help="print what would be installed; install nothing")
    args = parser.parse_args(argv)
    commands, notes = plan(requirements())
    for note in notes:
        if "upgrade" in note:  # an older release than the one tested with; the rest need no line each
            print(note)
    if not commands:
        print("install: everything the assignment needs is installed")
        return 0
    for command in commands:
        if "--index-url" in command and not reachable(TORCH_CPU_INDEX):
            print(f"install: {TORCH_CPU_INDEX} does not answer; torch comes from pip's configured index instead")
            command = without_cpu_index(command)
        names = " ".join(
            arg for arg in command[command.index("install") + 1 :] if not arg.startswith("-") and arg != TORCH_CPU_INDEX
        )
        if args.dry_run:
            print("would run: " + shlex.join(command))
            continue
        print(f"install: installing {names} ...", flush=True)
        failure = run_pip(command)
        if failure is not None:
            print(f"install: pip could not install {names}, so nothing after it was installed: {failure}")
            return 1
    if not args.dry_run:
        print(f"install: done ({len(notes)} packages were already there)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
