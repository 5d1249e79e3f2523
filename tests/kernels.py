"""Run a notebook on a named kernel spec, the way the notebook and handout tests do.

The kernel talks over IPC sockets in a private temporary folder, not TCP: with TCP, jupyter_client picks free ports
by binding and releasing them, and a kernel started at the same moment by another xdist worker can take one first
("Address already in use"; the kernel never answers and the test fails after a minute).
"""
from __future__ import annotations

import tempfile
from pathlib import Path


def run_notebook(nb, *, folder: Path, specs: Path, kernel_name: str, env: dict[str, str], timeout: int):
    """Execute `nb` in place with nbclient, in `folder`, on kernel `kernel_name` from the spec folder `specs`.

    Errors are kept as cell outputs (allow_errors); returns `nb`.
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:   # short: an IPC socket path has ~100 bytes
        km = AsyncKernelManager(kernel_name=kernel_name, transport="ipc",
                                connection_file=str(Path(sockets) / "connection.json"),
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs)]))
        client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True,
                                resources={"metadata": {"path": str(folder)}})
        try:
            client.execute(env=env)
        finally:   # a kernel manager handed to nbclient is not shut down by it
            if km.has_kernel:
                run_sync(km.shutdown_kernel)(now=True)
    return nb
