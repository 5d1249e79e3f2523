"""The template process (autograder/worker/template.py) as a grading process holds it: one per process, forked by a
grading command's clean start before it reads anything (Template.fork: the grader's clean_start module) or else started
at its first sandboxed zygote from a runtime copy of its own, kept for every grade the process runs (`batch` grades many
submissions in one process) and ended when the process ends. Every zygote of those grades is forked from it and enters
its sandbox itself, so a grade imports torch once instead of once per zygote.

The template runs no student code: it only forks. A zygote it forked is the template's child, not the grading
process's, so the grading process holds it as a TemplateChild, which asks the template for its status.

A batch's worker keeps its template across the submissions it grades, each in a grading process of its own that
it lends the template to (Template.lend, adopt); every request carries a number the answer repeats, so that an answer
meant for a grading process that was killed is never read by the next.

Its runtime copy outlives each grade, and a worker may be able to write to it (where it runs as the grader's own
user, or as root without capabilities, it owns those files): a zygote imports from it what the template has not, so
before every fork the copy is compared with what was copied (`runtime_fingerprint`), and a template whose copy
changed is ended and replaced by a fresh one with a fresh copy. What one submission's code wrote there never reaches
the next submission's workers.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import hashlib
import importlib
import json
import os
import secrets
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.public.client.disk import remove_tree
from autograder.public.client.errors import ZygoteLost
from autograder.public.client.processes import has_ended
from autograder.public.client.runtime import WORKER_PYTHON_FLAGS, copy_runtime

START_SECONDS = 60  # how long the template may take to start and fork a zygote (its first fork may import torch)
ANSWER_SECONDS = 15  # ... to answer a wait request beyond the seconds it was asked to wait


@dataclass
class Template:
    """A running template: its process, its control socket, its folder (its runtime copy and output file) and the
    process that started it (a forked grading process starts its own)."""

    folder: Path
    proc: subprocess.Popen
    control: socket.socket
    owner: int
    fingerprint: dict[str, str]  # its runtime copy as copied (runtime_fingerprint)
    lent: bool = False  # another process's template, lent to this one (adopt): never ended here

    @classmethod
    def start(cls, environment: dict[str, str]) -> Template:
        """A template from a runtime copy of its own, with `environment`."""
        folder, runtime = _new_folder()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(folder / "output.txt", "ab") as output:
            os.chmod(folder / "output.txt", 0o600)
            try:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        *WORKER_PYTHON_FLAGS,
                        str(runtime / "autograder" / "worker" / "template.py"),
                        "--control",
                        str(theirs.fileno()),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    pass_fds=(theirs.fileno(),),
                    cwd=folder,
                    start_new_session=True,
                    env={**environment, "HOME": str(folder), "TMPDIR": str(folder)},
                )
            finally:
                theirs.close()
        return cls(folder, proc, ours, os.getpid(), runtime_fingerprint(runtime))

    @classmethod
    def fork(cls, environment_of: Callable[[Path], dict[str, str]]) -> Template:
        """A template forked from this process, which must hold nothing a worker may not read (a grading command's
        clean start: autograder.grader.clean_start), with a runtime copy of its own and the environment
        `environment_of(folder)` gives. The child drops every module of the kit this process imported and serves
        from the copy, as a template started from it does."""
        folder, runtime = _new_folder()
        fingerprint = runtime_fingerprint(runtime)
        environment = {**environment_of(folder), "HOME": str(folder), "TMPDIR": str(folder)}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        output = os.open(folder / "output.txt", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _become_template(theirs.fileno(), output, folder, runtime, environment)
        os.close(output)
        theirs.close()
        return cls(folder, _ForkedProcess(pid), ours, os.getpid(), fingerprint)  # type: ignore[arg-type]

    def request(self, request: dict, timeout: float, fds: tuple[int, ...] = ()) -> dict:
        """Send the template one request and return its answer; ZygoteLost when it has none in `timeout` seconds
        (the template is then ended: a late answer must never be read as the next request's)."""
        number = secrets.randbits(63)  # echoed: an answer to an earlier process's request is never read as this one's
        self.control.settimeout(timeout)
        try:
            socket.send_fds(self.control, [json.dumps({**request, "seq": number}).encode()], list(fds))
            while True:
                answer = json.loads(self.control.recv(4096) or b"null")
                if not isinstance(answer, dict) or answer.get("seq") == number:
                    break
        except (OSError, ValueError) as exc:
            self.close()
            raise ZygoteLost(f"the template is gone ({type(exc).__name__})") from None
        if not isinstance(answer, dict):
            self.close()
            raise ZygoteLost("the template is gone")
        return answer

    def spawn(self, arguments: list[str], folder: Path, environment: dict, entry: dict, fds: tuple[int, int]):
        """A zygote forked from the template: `arguments` are its command line's after main.py (but --control),
        `fds` its control socket and output file; it enters `folder`, `environment` and the sandbox `entry`."""
        answer = self.request(
            {"start": arguments, "folder": str(folder), "environment": environment, "entry": entry},
            START_SECONDS,
            fds,
        )
        if type(answer.get("pid")) is not int:
            raise ZygoteLost("the template did not fork")
        return TemplateChild(self, answer["pid"])

    @property
    def running(self) -> bool:
        alive = not has_ended(self.proc.pid) if self.lent else self.proc.poll() is None
        return self.owner == os.getpid() and alive and self.control.fileno() != -1

    def lend(self) -> tuple[socket.socket, str]:
        """What a child process (a batch's grading process of one submission) needs to use this template (adopt):
        the control socket to pass it, and a text naming the template's process and folder."""
        return self.control, f"{self.proc.pid}:{self.folder}"

    @property
    def intact(self) -> bool:
        """Its runtime copy holds what was copied, and nothing else."""
        return runtime_fingerprint(self.folder / "runtime") == self.fingerprint

    def close(self) -> None:
        """End the template (its zygotes are in sessions of their own, each ended by its Worker) and its folder; a lent
        one is only let go."""
        if self.owner != os.getpid():
            return
        if self.lent:
            self.control.close()
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.control.close()
        remove_tree(self.folder)


class TemplateChild:
    """A zygote forked by the template, held as a subprocess.Popen is held (pid, poll, wait, returncode): its
    status comes from the template, its parent."""

    def __init__(self, template: Template, pid: int):
        self.template, self.pid = template, pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            seconds = 3600.0 if timeout is None else timeout
            try:
                status = self.template.request({"wait": self.pid, "seconds": seconds}, seconds + ANSWER_SECONDS)
            except ZygoteLost:  # the template's end took its children's statuses with it: gone, or unknown
                if has_ended(self.pid):
                    self.returncode = -signal.SIGKILL
                    return -signal.SIGKILL
                status = {"status": None}
            if type(status.get("status")) is not int:
                raise subprocess.TimeoutExpired(f"zygote {self.pid}", seconds)
            self.returncode = os.waitstatus_to_exitcode(status["status"])
        return int(self.returncode)

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None


def runtime_fingerprint(runtime: Path) -> dict[str, str]:
    """Every entry under `runtime` (symbolic links not followed): a file's SHA-256, anything else its kind."""
    found = {}
    for folder, folders, files in os.walk(runtime):
        for name in (*folders, *files):
            path = os.path.join(folder, name)
            kind = os.lstat(path).st_mode
            if stat.S_ISREG(kind):
                with open(path, "rb") as f:
                    found[os.path.relpath(path, runtime)] = hashlib.sha256(f.read()).hexdigest()
            else:
                found[os.path.relpath(path, runtime)] = f"kind {stat.S_IFMT(kind)}"
    return found


def _new_folder() -> tuple[Path, Path]:
    """A template's folder and the runtime copy in it."""
    folder = Path(tempfile.mkdtemp(prefix="captionkit-template-"))
    os.chmod(folder, 0o711)  # the sandbox user passes through to the runtime copy, and lists nothing
    return folder, copy_runtime(folder / "runtime")


def _become_template(control: int, output: int, folder: Path, runtime: Path, environment: dict[str, str]) -> None:
    """In a child just forked by Template.fork: keep only `control` (as 3) and `output` (as 1 and 2), take a session,
    the folder and the environment of the template's own, forget the kit's modules and serve from the runtime copy
    (autograder/worker/template.py). Never returns."""
    try:
        added = set(os.environ.get("PYTHONPATH", "").split(os.pathsep))  # the kit, as the clean start added it
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        null, output, control = (fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (null, output, control))
        for fd, target in ((null, 0), (output, 1), (output, 2), (control, 3)):
            os.dup2(fd, target)
        os.closerange(4, os.sysconf("SC_OPEN_MAX"))  # the grading command's own files above all
        os.chdir(folder)
        os.environ.clear()
        os.environ.update(environment)
        _blank_first_environment()
        tempfile.tempdir = None
        for name in [name for name in sys.modules if name.split(".")[0] in ("autograder", "shared")]:
            del sys.modules[name]  # imported from the kit: from now on from the runtime copy, as a worker imports
        sys.path[:] = [str(runtime)] + [p for p in sys.path if p and p not in added]  # nor the working folder
        importlib.invalidate_caches()
        serving = importlib.import_module("autograder.worker.template")
        sys.argv = [str(runtime / "autograder" / "worker" / "template.py"), "--control", "3"]
        sys.modules["__main__"] = serving  # as in a template started as its program
        serving.main(["--control", "3"])
    except BaseException as exc:  # noqa: BLE001 (say why where the template's output goes)
        os.write(2, f"template: not started: {type(exc).__name__}: {exc}\n".encode())
    finally:
        os._exit(127)


def _blank_first_environment() -> None:
    """Overwrite with zeros the environment block this process was started with (what /proc/self/environ shows, and
    every fork inherits), once os.environ has replaced every variable in it (no pointer into it remains)."""
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])  # env_start and env_end: proc(5)'s fields 50 and 51
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)


class _ForkedProcess:
    """A template this process forked, held as its Popen would be (poll, wait, pid)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # collected by the grader's reaping of orphans (sandbox._reap): ended
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"template {self.pid}", timeout or 0)
            time.sleep(0.01)
        return code


class _LentProcess:
    """The pid of a lent template, held as its Popen is."""

    def __init__(self, pid: int):
        self.pid = pid


_current: Template | None = None


def adopt(control: socket.socket, lent: str) -> None:
    """Use the template its parent lent this process (Template.lend: its control socket and `lent`) as this
    process's, from now on: the parent keeps it across the submissions it grades, one process per submission. Its
    runtime copy is taken as it is now (the parent checked it before this process started); a changed copy or a lost
    template makes this process start its own."""
    global _current
    pid, folder = lent.split(":", 1)
    _current = Template(
        Path(folder),
        _LentProcess(int(pid)),  # type: ignore[arg-type]
        control,
        os.getpid(),
        runtime_fingerprint(Path(folder) / "runtime"),
        lent=True,
    )


def prefork(environment_of: Callable[[Path], dict[str, str]]) -> None:
    """Fork this process's template now (Template.fork), before anything of a grade is read: a grading command's
    clean start (autograder.grader.clean_start)."""
    global _current
    _current = Template.fork(environment_of)


def forked_here() -> bool:
    """Whether this process forked the template it holds (prefork: a grading command's clean start)."""
    return _current is not None and _current.owner == os.getpid() and isinstance(_current.proc, _ForkedProcess)


def inherit() -> None:
    """In a child forked from a process that holds a template (os.fork, after prefork): use that template as this
    process's own, lent (the parent ends it)."""
    if _current is not None and _current.owner != os.getpid():
        adopt(*_current.lend())


def current_template(environment: dict[str, str]) -> Template:
    """This process's template: started at first use (with the worker's scrubbed `environment`), again when the one
    there was is gone or its runtime copy changed, and ended when the process exits."""
    global _current
    if _current is None or not _current.running or not _current.intact:
        if _current is not None:
            _current.close()
        _current = Template.start(environment)
    return _current


def close_template() -> None:
    """End this process's template, if it started one."""
    global _current
    if _current is not None:
        _current.close()
        _current = None


atexit.register(close_template)
