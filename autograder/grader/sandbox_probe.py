"""Whether a worker can run in a candidate isolation, tried before the grader chooses it: the probe starts this
Python behind the isolation's prefix and checks that it finds the same torch, the standard modules and the installed
files that `import torch` needs (`probe`); the isolation note names another Python when the probe ran one
(`python_note`).
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from dataclasses import dataclass

from autograder.grader.hidden_paths import HIDDEN_PATHS, ROOT, oracle_folders

# What a worker must be able to do in a candidate isolation: start this Python, find the same torch and every
# standard-library module `import torch` loads here (standard_modules), and read every file of the installed packages
# that import loads here and list their folders (installed_files). Importing torch would prove the same for 1.5 to 2
# CPU s a grade; each part's zygote imports it anyway. The probe prints the version and prefix of the Python it ran: a
# sandbox user who cannot read this interpreter's own folder (pyenv's, under a 0700 /root) starts another Python of
# the same name with this environment's packages, which the isolation note then names (python_note).
PROBE_PROGRAM = """\
import importlib.util, os, sys
origin, standard, paths = sys.argv[1], sys.argv[2].split(","), sys.stdin.read().splitlines()
spec = importlib.util.find_spec("torch")
if spec is None or spec.origin != origin:
    sys.exit(f"torch is at {spec and spec.origin}, not {origin}")
missing = [name for name in standard if importlib.util.find_spec(name) is None]
if missing:
    sys.exit(f"this Python has no {missing}")
unreadable = [p for p in paths if not os.access(p, os.R_OK | (os.X_OK if os.path.isdir(p) else 0))]
if unreadable:
    sys.exit(f"{len(unreadable)} installed files or folders cannot be read, such as {unreadable[0]}")
print(sys.version.split()[0], sys.base_prefix)
"""


def installed_files() -> list[str]:
    """The files of installed packages (site-packages) that `import torch` loads in this process, modules and the
    native libraries they map, with every folder from site-packages down to them: what a worker's imports must read.
    Never the oracle packages' or the kit's hidden paths (protect_hidden makes both root's alone)."""
    import sysconfig

    roots = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    excluded = [os.path.realpath(p) for p in (*oracle_folders(), *(ROOT / rel for rel in HIDDEN_PATHS))]
    loaded = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    try:
        with open("/proc/self/maps") as maps:  # the native libraries: "address perms offset dev inode path"
            loaded |= {fields[5].strip() for fields in (line.split(maxsplit=5) for line in maps) if len(fields) == 6}
    except OSError:  # no /proc: the modules' own files only (their extension modules among them)
        pass
    paths = set()
    for name in loaded:
        if not isinstance(name, str) or not name.startswith("/") or name.endswith(" (deleted)"):
            continue
        path = os.path.realpath(name)
        root = next((r for r in roots if path.startswith(r + os.sep)), None)
        if root is None or any(path == e or path.startswith(e + os.sep) for e in excluded):
            continue
        paths.add(path)
        folder = os.path.dirname(path)
        while len(folder) >= len(root):
            paths.add(folder)
            folder = os.path.dirname(folder)
    return sorted(paths)


def standard_modules() -> list[str]:
    """The top-level standard-library modules this process has loaded (`import torch` among what loaded them):
    another Python that a worker may run (python_note) must have each."""
    return sorted(name for name in list(sys.modules) if name in sys.stdlib_module_names and name != "__main__")


@dataclass(frozen=True)
class ProbeInputs:
    """What the probe checks (PROBE_PROGRAM): torch's path, the standard modules by name, the installed paths (sent
    on its standard input: a list of thousands of paths could outgrow a command line)."""

    origin: str
    standard: tuple[str, ...]
    paths: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def probe_inputs() -> ProbeInputs:
    """The probe's inputs, once per process (detect() may try several isolations): standard_modules and
    installed_files once this process has imported torch."""
    import importlib.util

    import torch  # noqa: F401 (a grader imports it anyway; what it loads is what is listed)

    return ProbeInputs(importlib.util.find_spec("torch").origin, tuple(standard_modules()), tuple(installed_files()))


def probe(prefix: list[str], inputs: ProbeInputs | None = None) -> str | None:
    """Run the probe on `inputs` (by default probe_inputs()) behind `prefix`: the version and prefix of the Python a
    worker would run ("3.11.7 /usr"), or None if it cannot run this Python or read the packages."""
    inputs = inputs or probe_inputs()
    command = [sys.executable, "-I", "-c", PROBE_PROGRAM, inputs.origin, ",".join(inputs.standard)]
    try:
        done = subprocess.run(
            prefix + command,
            input="\n".join(inputs.paths),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def python_note(found: str) -> str:
    """ "" when the probe ran this very Python; else what a TA should know, for the isolation note."""
    version, _, prefix = found.partition(" ")
    if version == platform.python_version() and prefix == sys.base_prefix:
        return ""
    return (
        f"; the worker runs Python {version} of {prefix}, not this {platform.python_version()} of {sys.base_prefix} "
        "(the sandbox user cannot read the interpreter's folder: install Python where other users can; until then "
        "each zygote starts an interpreter of its own instead of being forked from the template)"
    )
