"""Run a notebook on a named kernel spec, the way the notebook and handout tests do.

The kernel talks over IPC sockets in a private temporary folder, not TCP: with TCP, jupyter_client picks free ports
by binding and releasing them, and a kernel started at the same moment by another xdist worker can take one first
("Address already in use"; the kernel never answers and the test fails after a minute).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def kernel_spec(folder: Path, name: str, python: Path | str = sys.executable) -> Path:
    """A kernel spec `name` for `python` (default: this interpreter) in `folder`/name (so no other installed "python3"
    kernel is picked); returns `folder`, the spec folder run_notebook takes."""
    spec = folder / name
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": name,
                "language": "python",
            }
        )
    )
    return folder


def notebook_env(folder: Path) -> dict[str, str]:
    """A kernel's environment as a student's runs: one thread, the notebooks' data cache in `folder`/cache, an
    IPython folder of its own (no startup files of the machine's)."""
    return dict(
        os.environ,
        CAPTIONKIT_CACHE=str(folder / "cache"),
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        IPYTHONDIR=str(folder / "ipython"),
    )


def warm_data_cache(env: dict[str, str], cwd: Path) -> None:
    """Build the notebooks' data cache of `env` once (its one-off encoder training), outside any notebook."""
    subprocess.run(
        [sys.executable, "-c", "from shared.notebook import notebook_data; notebook_data()"],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def run_notebook(nb, *, folder: Path, specs: Path, kernel_name: str, env: dict[str, str], timeout: int):
    """Execute `nb` in place with nbclient, in `folder`, on kernel `kernel_name` from the spec folder `specs`.

    Errors are kept as cell outputs (allow_errors); returns `nb`.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:  # short: an IPC socket path has ~100 bytes
        km = AsyncKernelManager(
            kernel_name=kernel_name,
            transport="ipc",
            connection_file=str(Path(sockets) / "connection.json"),
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs)]),
        )
        client = NotebookClient(
            nb, km=km, timeout=timeout, allow_errors=True, resources={"metadata": {"path": str(folder)}}
        )
        try:
            client.execute(env=env)
        finally:  # a kernel manager handed to nbclient is not shut down by it
            if km.has_kernel:
                run_sync(km.shutdown_kernel)(now=True)
    return nb
