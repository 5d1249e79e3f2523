"""The grading process's side of the sandbox: start a worker for one part, call recipes in it with
a time limit, and kill it (its whole process group) when it overruns or misbehaves.

Student code never runs in this process. What comes back is plain data, checked by the caller.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox import protocol
from autograder.sandbox.isolation import Isolation, sweep
from autograder.sandbox.staging import stage

STARTUP_TIMEOUT = 60.0
# Multiplies every wall-clock limit of the sandbox and the engine: 1 on a grading machine; larger where many
# grading runs share few cores (the kit's own test suite sets it), so correct code is never cut off by load.
TIME_SCALE = float(os.environ.get("CAPTIONKIT_TIME_SCALE", "1"))


class StudentError(Exception):
    """The student's code raised. `kind` is the exception type, `detail` its message, `where` the
    lines of the student's file it came from."""

    def __init__(self, kind: str, detail: str, where: str = ""):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.where = kind, detail, where


class WorkerDied(Exception):
    """The worker exited, was killed, or overran its time limit. The message is one line."""


@dataclass
class Limits:
    """Resource limits of a worker, set by the worker on itself before it imports student code."""
    memory_bytes: int = 3 * 1024 ** 3      # address space: torch needs about 1 GiB to import
    file_bytes: int = 16 * 1024 ** 2       # the largest file it may write (its output file included)
    processes: int = 64                    # per user: enforced for the sandbox user, not for root
    cpu_seconds: int = 900                 # a backstop: wall-clock limits per call and per part come first


class Worker:
    """One worker process serving one part's recipes over a pair of pipes.

    `scratch` is this part's folder: staging/ (the module, read-only to the worker), work/ (the worker's
    current and home folder, owned by the sandbox user) and output.txt (what the student's code printed).
    `references` maps earlier parts' names to their reference source, installed in the worker's memory.
    """

    def __init__(self, module: str, submission: Path, scratch: Path, runtime: Path, isolation: Isolation,
                 references: dict[str, str] | None = None, limits: Limits | None = None,
                 deadline: float | None = None):
        self.module = module
        self.scratch = Path(scratch)
        self.runtime, self.isolation = Path(runtime), isolation
        self.references = references or {}
        self.limits = limits or Limits()
        self.deadline = deadline
        self.check_deadline: float | None = None   # set by the engine for each check
        self.on_progress = None   # set by the engine: on_progress(epoch, epochs, loss) after each training epoch
        self.proc: subprocess.Popen | None = None
        self.dead_reason: str | None = None
        self.import_error: StudentError | None = None
        self.scratch.mkdir(parents=True, exist_ok=True)
        os.chmod(self.scratch, 0o711)
        self.staging = stage(module, Path(submission), self.scratch / "staging")
        # Readable by this grader's sandbox user only: not by another run's sandbox user (a batch with --jobs).
        for path, mode in ((self.staging, 0o750), (self.staging / f"{module}.py", 0o640)):
            if isolation.gid is not None:
                os.chown(path, 0, isolation.gid)
                os.chmod(path, mode)
            else:
                os.chmod(path, mode | 0o005)
        self._start()

    # -- lifecycle -----------------------------------------------------------------------------
    def _start(self) -> None:
        work = self.scratch / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        os.chmod(work, 0o700)
        self.isolation.owns(work)
        self.work = work
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        self.stdout = open(self.scratch / "output.txt", "ab")
        os.chmod(self.scratch / "output.txt", 0o600)
        lim = self.limits
        cmd = [*self.isolation.prefix, sys.executable, "-I", "-B", "--check-hash-based-pycs", "always",
               "-X", "faulthandler", str(self.runtime / "autograder" / "sandbox" / "worker.py"),
               "--module", self.module, "--staging", str(self.staging),
               "--requests", str(req_r), "--replies", str(rep_w), "--memory", str(lim.memory_bytes),
               "--cpu", str(lim.cpu_seconds), "--file-size", str(lim.file_bytes), "--processes", str(lim.processes)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.stdout, stderr=subprocess.STDOUT,
                                     pass_fds=(req_r, rep_w), cwd=work, start_new_session=True,
                                     env=self._environment())
        os.close(req_r)
        os.close(rep_w)
        self.requests, self.replies = req_w, rep_r
        startup, cut_by_deadline = STARTUP_TIMEOUT * TIME_SCALE, False
        if self.deadline is not None and self.deadline - time.monotonic() < startup:
            startup, cut_by_deadline = max(self.deadline - time.monotonic(), 1.0), True
        try:
            protocol.send(self.requests, {"references": self.references})
            hello = protocol.receive(self.replies, timeout=startup)
        except protocol.ChannelTimeout:
            self.kill("the part's time limit was reached" if cut_by_deadline else "the worker did not start in time")
            return
        except (protocol.ChannelClosed, protocol.MessageTooLarge, BrokenPipeError) as exc:
            self.kill(f"the worker did not start ({type(exc).__name__})")
            return
        if not isinstance(hello, dict) or not hello.get("ready"):
            err = hello.get("error", {}) if isinstance(hello, dict) else {}
            self.import_error = StudentError(str(err.get("type", "Error")), str(err.get("message", "")),
                                             str(err.get("where", "")))
            self.kill(f"{self.module}.py could not be imported: {self.import_error}")

    def _environment(self) -> dict:
        """A scrubbed environment: nothing of the grader's but what Python and torch need."""
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.work), "TMPDIR": str(self.work), "LANG": "C.UTF-8",
                "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONHASHSEED": "0", "CUDA_VISIBLE_DEVICES": os.environ.get("CAPTIONKIT_WORKER_CUDA", "")}

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.dead_reason is None and self.proc.poll() is None

    def kill(self, reason: str) -> None:
        """Kill the worker's whole process group, then every process of the sandbox user; remember why."""
        if self.dead_reason is None:
            self.dead_reason = reason
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        sweep(self.isolation)
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for fd in ("requests", "replies"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)

    def close(self) -> None:
        self.kill("closed")
        self.stdout.close()
        shutil.rmtree(self.work, ignore_errors=True)

    def restart(self) -> None:
        """A fresh worker for the same part (after a crash or a timeout in one check)."""
        self.kill("restarted")
        self.stdout.close()
        self.dead_reason = None
        self._start()

    # -- calls ---------------------------------------------------------------------------------
    def call(self, recipe: str, timeout: float = 20.0, **kwargs):
        """Run `recipe` on the student's module with `kwargs`; return its (plain-data) result.

        Raises StudentError when the student's code raised, WorkerDied when the worker is gone or
        overran `timeout` seconds (it is then killed)."""
        if not self.alive:
            raise WorkerDied(self.dead_reason or "the worker is not running")
        timeout *= TIME_SCALE
        limit_name = None
        for name, deadline in (("the check's time limit", self.check_deadline), ("the part's time limit", self.deadline)):
            if deadline is None:
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill(f"{name} was reached")
                raise WorkerDied(self.dead_reason)
            if left < timeout:
                timeout, limit_name = left, name
        try:
            protocol.send(self.requests, {"recipe": recipe, "kwargs": kwargs})
            deadline = time.monotonic() + timeout
            reply = protocol.receive(self.replies, timeout=timeout)
            while isinstance(reply, dict) and "progress" in reply:   # a training epoch ended: show it, read on
                epoch = progress_of(reply)
                if epoch is None:
                    self.kill("sent a malformed progress message")
                    raise WorkerDied(self.dead_reason)
                if self.on_progress is not None:
                    self.on_progress(*epoch)
                reply = protocol.receive(self.replies, timeout=max(deadline - time.monotonic(), 0.0))
        except protocol.ChannelTimeout:
            self.kill(f"{limit_name} was reached" if limit_name else f"timed out after {timeout:.0f} s")
            raise WorkerDied(self.dead_reason)
        except (protocol.ChannelClosed, BrokenPipeError):
            code = self.proc.wait(timeout=10)
            self.kill(_describe_exit(code))
            raise WorkerDied(self.dead_reason)
        except Exception as exc:  # an unreadable or oversized reply
            self.kill(f"sent an unreadable reply ({type(exc).__name__})")
            raise WorkerDied(self.dead_reason)
        if not isinstance(reply, dict):
            self.kill("sent a malformed reply")
            raise WorkerDied(self.dead_reason)
        if "error" in reply:
            err = reply["error"]
            raise StudentError(str(err.get("type")), str(err.get("message")), str(err.get("where", "")))
        return reply.get("ok")


MAX_EPOCHS = 10_000


def progress_of(message) -> tuple[int, int, float] | None:
    """(epoch, epochs, loss) of a worker's progress message {"progress": {"epoch": e, "epochs": n, "loss": x}}
    with 1 <= e <= n <= MAX_EPOCHS, exact ints and a float; None for anything else (student code can send it)."""
    if not isinstance(message, dict) or set(message) != {"progress"}:
        return None
    body = message["progress"]
    if not isinstance(body, dict) or set(body) != {"epoch", "epochs", "loss"}:
        return None
    epoch, epochs, loss = body["epoch"], body["epochs"], body["loss"]
    if type(epoch) is not int or type(epochs) is not int or type(loss) is not float:
        return None
    return (epoch, epochs, loss) if 1 <= epoch <= epochs <= MAX_EPOCHS else None


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the worker stopped answering"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"the worker was killed by {name}" + (" (likely out of memory)" if name == "SIGKILL" else "")
    return f"the worker exited with status {code} (the student's code ended the process)"


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
