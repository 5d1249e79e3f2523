"""The handout as a student meets it, past what tests/instructor/test_handout.py proves of its contents:

- `python install.py` when PyTorch's CPU index does not answer: torch comes from the index pip is configured with,
  in a few lines of output, and the environment ends with torch installed; when pip cannot install, one line says so;
- a notebook run in the handout leaves no file in the student's folder (its data cache goes to the documented cache
  folder, otter writes no log there);
- no file of the handout names a file of the kit that the handout lacks (a comment pointing at a hidden check).
"""

from __future__ import annotations

import importlib.metadata
import os
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
from tests.kernels import kernel_spec, run_notebook

ROOT = Path(__file__).resolve().parents[2]


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
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
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
    env = install_env(PIP_FIND_LINKS=str(tmp_path / "no-wheels"))  # nothing to install from
    done = subprocess.run([str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == "" and len(lines) == 3, done.stdout + done.stderr
    assert "does not answer; torch comes from pip's configured index instead" in lines[0], lines
    assert lines[1].startswith("install: installing torch"), lines
    assert re.fullmatch(
        r"install: pip could not install torch\S*, so nothing after it was installed: ERROR: .+", lines[2]
    ), lines


@pytest.mark.slow
def test_install_without_the_cpu_index_installs_torch_from_the_configured_index(tmp_path):
    """About a minute: pip unpacks a CPU torch wheel (from its configured find-links; skipped where it has none)."""
    folder = install_folder(tmp_path / "captioning")
    python = python_without_torch(tmp_path)
    env = install_env()
    offered = subprocess.run(
        [str(python), "-m", "pip", "install", "--dry-run", "--no-deps", "--quiet", "torch>=2.4"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if offered.returncode != 0:
        pytest.skip("pip's configuration offers no torch wheel without a network (find-links)")
    assert subprocess.run([str(python), "-c", "import torch"], env=env, capture_output=True).returncode != 0

    done = subprocess.run([str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == "" and len(lines) <= 4, done.stdout + done.stderr
    assert "does not answer; torch comes from pip's configured index instead" in lines[0], lines
    assert lines[-1].startswith("install: done"), lines
    where = subprocess.run(
        [str(python), "-c", "import torch; print(torch.__file__); print(torch.ones(2).sum())"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(python.parent.parent)) and "tensor(2.)" in where.stdout, where.stdout
    again = subprocess.run(
        [str(python), "install.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )
    assert again.stdout.splitlines() == ["install: everything the assignment needs is installed"], again.stdout


# -- what a notebook leaves behind -----------------------------------------------------------------------------------


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_a_notebook_leaves_no_file_in_the_students_folder(built, student_python, tmp_path):
    """The handout's bleu notebook run top to bottom on the reference, with one cell more that loads the notebooks'
    data (as every training demo does), $CAPTIONKIT_CACHE unset: the data cache lands in the user's cache folder
    that the README names, otter writes no .OTTER_LOG, and the folder gains nothing but Python's own __pycache__."""
    import nbformat

    folder = tmp_path / "captioning"
    shutil.copytree(built[0], folder)
    shutil.copy(ROOT / "solutions" / "bleu.py", folder / "bleu.py")
    before = files_under(folder)
    nb = nbformat.read(folder / "bleu.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("from shared.notebook import notebook_data\nnotebook_data();"))
    env = {k: v for k, v in student_env().items() if k not in ("CAPTIONKIT_CACHE", "PYTHONDONTWRITEBYTECODE")}
    env |= {
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "user-cache"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "MPLCONFIGDIR": str(tmp_path / "matplotlib"),
    }
    specs = kernel_spec(tmp_path / "kernels", "captionkit-student", python=student_python)
    nb = run_notebook(nb, folder=folder, specs=specs, kernel_name="captionkit-student", env=env, timeout=600)

    errors = [
        f"{o.ename}: {o.evalue}"
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    assert any(
        "All test cases passed" in o.get("text", "") + str(o.get("data", {}))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    )
    new = {name for name in files_under(folder) - before if "__pycache__/" not in name}
    assert new == set()
    assert list((tmp_path / "user-cache" / "captionkit").glob("grids-*.pt"))  # the cache went where it is named
    assert (
        "user cache folder" in (folder / "README.md").read_text() and "captionkit" in (folder / "README.md").read_text()
    )


# -- what the handout's files point to -------------------------------------------------------------------------------

# A path of the kit as comments and messages write it: folders (lower case: not a placeholder like RUNTIME/) and a
# file name with an extension, `autograder/grader/checks/bleu.py`, or anything under docs/. Not part of a longer
# path or of a URL (nothing before it but a space, a bracket, a quote or a backtick).
KIT_PATH = re.compile(r"(?<![\w./@$~<>-])((?:[a-z_][\w-]*/)+[\w-][\w.-]*\.[a-z]+\b|docs/[\w./-]*\w)")


def kit_paths(text: str) -> set[str]:
    """The paths of the kit that `text` names (KIT_PATH)."""
    return set(KIT_PATH.findall(text))


def test_the_path_pattern_finds_what_a_comment_points_to():
    text = (
        "(The part's hidden checks: autograder/grader/checks/bleu.py.) see docs/bleu.md; `shared/vocab.py`\n"
        "https://download.pytorch.org/whl/cpu RUNTIME/autograder/worker/main.py ~/.cache/captionkit/ 0.5/1.0"
    )
    assert kit_paths(text) == {"autograder/grader/checks/bleu.py", "docs/bleu.md", "shared/vocab.py"}


def test_no_file_of_the_handout_points_to_a_file_it_lacks(built):
    """Every path of the kit that a file of the handout names (a comment, a docstring, a message, the README, a
    notebook) is a file of the handout: a student is never sent to a hidden check or a page of the kit's docs."""
    folder = built[0]
    present = files_under(folder) | {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir()}
    missing = {}
    for name in sorted(files_under(folder)):
        if name.endswith((".pt", ".png")):
            continue
        for path in kit_paths((folder / name).read_text(encoding="utf-8")):
            if path.rstrip("/") not in present:
                missing.setdefault(name, []).append(path)
    assert missing == {}


def test_a_notebook_runs_torch_on_one_thread():
    """shared.notebook.setup (every notebook's first cell) sets one torch thread whatever the machine's default: with
    torch's default threads the show_and_tell notebook took 61 CPU s on a loaded two-core machine, with one 14
    (benchmarks/notebook_benchmark.py)."""
    code = (
        "import torch\ntorch.set_num_threads(2)\nfrom shared.notebook import setup\nsetup('bleu')\n"
        "print(torch.get_num_threads())"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"]


def test_check_train_keeps_its_data_cache_out_of_the_student_s_folder(tmp_path, monkeypatch):
    """`check --train` encodes the public scenes once and caches them: with $CAPTIONKIT_CACHE unset, in the user's
    cache folder (as the notebooks do), never in the folder the student runs it from."""
    from autograder.public import checker, training

    seen = {}
    monkeypatch.delenv("CAPTIONKIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        training, "public_inputs", lambda folder: seen.setdefault("cache", os.environ["CAPTIONKIT_CACHE"])
    )
    monkeypatch.setattr(training, "train_parts", lambda *args: [])
    assert checker.train(tmp_path, ()) == []
    assert seen["cache"] == str(tmp_path / "user-cache" / "captionkit")
