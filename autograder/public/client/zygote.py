"""The zygote a part's workers are forked from (autograder/worker/main.py), as the grading process holds it: its
state, how it is started, and the one a student's `check` shares between parts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from autograder.public.client.errors import ZygoteLost
from autograder.public.client.interface import SEPARATE_PROCESS, Isolation, Limits
from autograder.public.client.runtime import WORKER_PYTHON_FLAGS
from autograder.public.client.template import TemplateChild, current_template

# Fixed waits of the grader's own machinery, not time limits of grading (autograder/public/limits.py says why):
FORK_SECONDS = 15  # how long a zygote that answered before may take to fork a worker
KILL_SECONDS = 5  # ... to kill one and collect its status


@dataclass
class ZygoteState:
    """A zygote (autograder/worker/main.py) as the grader holds it: the process as started, its control socket, the
    file its output goes to and, from its first fork on, (pid, start time) of its processes (Worker._find_zygote).
    `folder` is its current folder, where output.txt lies: the folders of the workers forked from it lie below it
    (Landlock lets them write there); `modules` are the parts it serves."""

    folder: Path
    modules: tuple[str, ...]
    proc: subprocess.Popen | TemplateChild | None = None
    control: socket.socket | None = None
    stdout: IO | None = None
    chain: tuple[tuple[int, int | None], ...] | None = None


class SharedZygote(ZygoteState):
    """One zygote for every part of a student's `check` (autograder.public.checker), so that torch is imported once:
    started first, beside the checker's own imports, and handed to each part's Worker (`shared`), which forks its
    workers from it and leaves it running when it closes. A part whose code ends it costs the parts after it a fresh
    one. Only without a sandbox (SEPARATE_PROCESS): in a grade no two parts share a process (Worker)."""

    @classmethod
    def start(cls, folder: Path, modules: tuple[str, ...], runtime: Path, limits: Limits | None = None) -> SharedZygote:
        zygote = cls(Path(folder), tuple(modules))
        zygote.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(zygote.folder, 0o711)
        start_zygote(zygote, Path(runtime), SEPARATE_PROCESS, limits or Limits(), worker_environment(zygote.folder))
        return zygote

    def close(self) -> None:
        """End the zygote (each Worker has ended its own workers)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for channel in (self.control, self.stdout):
            if channel is not None:
                channel.close()
        self.proc = self.control = self.stdout = self.chain = None


def start_zygote(zygote: ZygoteState, runtime: Path, isolation: Isolation, limits: Limits, environment: dict) -> None:
    """Start the zygote `zygote` (not running) from `runtime`, isolated by `isolation`, with `limits` and
    `environment`; its output goes to output.txt in its folder."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote.stdout = open(zygote.folder / "output.txt", "ab")
    os.chmod(zygote.folder / "output.txt", 0o600)
    # In a PID namespace of its own the worker is not its first process, which would ignore its own crashes.
    python = (
        [sys.executable, "-I", "-S", "-B", str(runtime / "autograder" / "worker" / "init.py"), "--"]
        if isolation.pid_namespace
        else [sys.executable]
    )
    modules = [argument for module in zygote.modules for argument in ("--module", module)]
    arguments = [
        *modules,
        "--memory",
        str(limits.memory_bytes),
        "--cpu",
        str(limits.cpu_seconds),
        "--file-size",
        str(limits.file_bytes),
        "--processes",
        str(limits.processes),
        *(["--own-shm"] if isolation.private_tmp else []),
        *(["--own-pids"] if isolation.pid_namespace else []),
        "--inputs",
        str(runtime.parent),
    ]
    entry = isolation.entry
    if entry is not None:  # forked from this process's template, entering the sandbox itself
        fds = (theirs.fileno(), zygote.stdout.fileno())
        try:
            try:
                zygote.proc = current_template(environment).spawn(arguments, zygote.folder, environment, entry, fds)
            except ZygoteLost:  # a template that died (of a worker's kill, where it can reach it) costs nobody a part
                zygote.proc = current_template(environment).spawn(arguments, zygote.folder, environment, entry, fds)
        finally:
            theirs.close()
        zygote.control, zygote.chain = ours, None
        return
    cmd = [
        *isolation.prefix,
        *python,
        *WORKER_PYTHON_FLAGS,
        str(runtime / "autograder" / "worker" / "main.py"),
        *arguments,
        "--control",
        str(theirs.fileno()),
    ]
    try:
        zygote.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=zygote.stdout,
            stderr=subprocess.STDOUT,
            pass_fds=(theirs.fileno(),),
            cwd=zygote.folder,
            start_new_session=True,
            env=environment,
        )
    finally:
        theirs.close()
    zygote.control, zygote.chain = ours, None


def worker_environment(home: Path) -> dict:
    """A worker's scrubbed environment: nothing of the grader's but what Python and torch need (a forked worker
    makes its own folder its home and temporary folder: autograder.worker.main.become_worker)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "CUDA_VISIBLE_DEVICES": os.environ.get("CAPTIONKIT_WORKER_CUDA", ""),
        **{name: os.environ[name] for name in ("CAPTIONKIT_WORKER_DROP",) if name in os.environ},
    }  # tests only


class ZygoteAttribute:
    """A Worker attribute kept in its ZygoteState (its own, or the SharedZygote it was given) under `field_name`."""

    def __init__(self, field_name: str):
        self.field_name = field_name

    def __get__(self, worker, owner=None):
        return self if worker is None else getattr(worker.state, self.field_name)

    def __set__(self, worker, value) -> None:
        setattr(worker.state, self.field_name, value)
