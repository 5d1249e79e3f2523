"""The handout as a student meets it, past what tests/test_handout.py proves of its contents:

- `python install.py` when PyTorch's CPU index does not answer: torch comes from the index pip is configured with,
  in a few lines of output, and the environment ends with torch installed; when pip cannot install, one line says so;
- a notebook run in the handout leaves no file in the student's folder (its data cache goes to the documented cache
  folder, otter writes no log there);
- no file of the handout names a file of the kit that the handout lacks (a comment pointing at a hidden check).
"""
from __future__ import annotations

import importlib.metadata
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from instructor import handout
from tests.handout_env import student_env


def closed_port_url() -> str:
    """An http URL on this machine where nothing listens: a connection to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/whl/cpu"


def torch_top_levels() -> set[str]:
    """The top-level names of site-packages that the installed torch distribution owns (torch, its dist-info,
    functorch, torchgen, ...)."""
    files = importlib.metadata.distribution("torch").files or []
    return {Path(f).parts[0] for f in files if not Path(f).parts[0].startswith("..")}


def python_without_torch(where: Path) -> Path:
    """A virtual environment (no pip of its own) that sees every installed package of this interpreter except torch:
    its path file names a folder of links to this interpreter's site-packages, torch's entries left out. So
    install.py has only torch to install, and pip (one of the linked packages) installs it into this venv."""
    linked = where / "packages-without-torch"
    linked.mkdir(parents=True)
    packages = Path(sysconfig.get_paths()["purelib"])
    skipped = torch_top_levels()
    for entry in packages.iterdir():
        if entry.name not in skipped and not entry.name.endswith(".pth") and entry.name != "__pycache__":
            (linked / entry.name).symlink_to(entry)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "packages-without-torch.pth").write_text(f"{linked}\n")
    return python


def install_env(**extra: str) -> dict[str, str]:
    """A student's environment with the CPU index unreachable and pip kept off the network (PIP_NO_INDEX): what pip
    installs comes from its configured find-links alone, never a download."""
    return student_env() | {"TORCH_CPU_INDEX": closed_port_url(), "PIP_NO_INDEX": "1"} | extra


def install_folder(where: Path) -> Path:
    """install.py and requirements.txt as the handout holds them (instructor/handout.py), in a folder of their own."""
    where.mkdir(parents=True)
    shutil.copy(handout.FILES / "install.py", where / "install.py")
    (where / "requirements.txt").write_text(handout.requirements_text())
    return where


def test_install_without_the_cpu_index_fails_in_one_line_when_pip_cannot_install(tmp_path):
    folder = install_folder(tmp_path / "captioning")
    python = python_without_torch(tmp_path)
    env = install_env(PIP_FIND_LINKS=str(tmp_path / "no-wheels"))   # nothing to install from
    done = subprocess.run([str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == "" and len(lines) == 3, done.stdout + done.stderr
    assert "does not answer; torch comes from pip's configured index instead" in lines[0], lines
    assert lines[1].startswith("install: installing torch"), lines
    assert re.fullmatch(r"install: pip could not install torch\S*, so nothing after it was installed: ERROR: .+",
                        lines[2]), lines


@pytest.mark.slow
def test_install_without_the_cpu_index_installs_torch_from_the_configured_index(tmp_path):
    """About a minute: pip unpacks a CPU torch wheel (from its configured find-links; skipped where it has none)."""
    folder = install_folder(tmp_path / "captioning")
    python = python_without_torch(tmp_path)
    env = install_env()
    offered = subprocess.run([str(python), "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet", "torch>=2.4"],
                             env=env, capture_output=True, text=True, timeout=300)
    if offered.returncode != 0:
        pytest.skip("pip's configuration offers no torch wheel without a network (find-links)")
    assert subprocess.run([str(python), "-c", "import torch"], env=env, capture_output=True).returncode != 0

    done = subprocess.run([str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "" and len(lines) <= 4, done.stdout + done.stderr
    assert "does not answer; torch comes from pip's configured index instead" in lines[0], lines
    assert lines[-1].startswith("install: done"), lines
    where = subprocess.run([str(python), "-c", "import torch; print(torch.__file__); print(torch.ones(2).sum())"],
                           env=env, capture_output=True, text=True, timeout=300)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(python.parent.parent)) and "tensor(2.)" in where.stdout, where.stdout
    again = subprocess.run([str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.stdout.splitlines() == ["install: everything the assignment needs is installed"], again.stdout
