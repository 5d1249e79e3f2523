"""The grading process's side of the sandbox: start a worker for one part, call recipes in it with
a time limit, and kill it (its whole process group) when it overruns or misbehaves.

Student code never runs in this process. What comes back is plain data, checked by the caller.
"""
from __future__ import annotations

import ast
import builtins
import collections
import functools
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Protocol

from autograder.public import limits as time_limits   # (`limits` is a Worker argument)
from autograder.public.limits import Deadline, earliest
from autograder.public.source_scan import banned_uses, grader_reach
from autograder.public.staging import stage
from autograder.worker import protocol, recipes
from autograder.worker.forbidden import READABLE
from autograder.worker.protocol import clean

ROOT = Path(__file__).resolve().parents[2]
# The code a worker runs from, and nothing else: the worker zone and shared/ (no checks, no references, no hidden
# seed). A worker starts from a copy of them (copy_runtime), never from the kit's own folders.
RUNTIME_FILES = ("autograder/__init__.py", "autograder/worker/**/*.py", "shared/*.py")
TREE_MEMORY_BYTES = 6 * 1024 ** 3   # the default of Limits.tree_memory_bytes


class StudentError(Exception):
    """The student's code raised. `kind` is the exception type (one of KINDS), `detail` its message, `where` the
    lines of the student's file it came from (the grader's own text of them: student_frames), `case` the call that
    raised (set by the check that made it, else by autograder.public.runner.WithinCheck: a public check's message
    names it)."""

    def __init__(self, kind: str, detail: str, where: str = "", case: str = ""):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail, self.where, self.case = kind, detail, where, case


class OverMemory(Exception):
    """The worker's process tree used more memory than Limits.tree_memory_bytes. `shown`: what a hidden check shows."""
    shown = "the worker used more memory than it may"


class OverDisk(OverMemory):
    """The worker's files took more than Limits.disk_bytes or disk_files (disk_usage)."""
    shown = "the worker wrote more files than it may"


class FolderTooDeep(OverDisk):
    """The worker nested its folders deeper than the disk watchdog looks (limits.WORKER_FOLDER_DEPTH)."""


class ZygoteLost(Exception):
    """The part's zygote is gone or no longer the process it was (autograder/worker/main.py)."""


# Fixed waits of the grader's own machinery, not time limits of grading (autograder/public/limits.py says why):
FORK_SECONDS = 15   # how long a zygote that answered before may take to fork a worker
KILL_SECONDS = 5    # ... to kill one and collect its status


class WorkerDied(Exception):
    """The worker exited, was killed, or overran its time limit. The message is one line; `shown` is what a hidden
    check may show of it: nothing the student's code chose (an import error's message, an exit status, a signal, how
    much memory), since the workers of hidden checks hold the references of earlier parts (serve_hidden)."""

    def __init__(self, reason: str, shown: str | None = None):
        super().__init__(reason)
        self.shown = reason if shown is None else shown


class TimedOut(WorkerDied):
    """The call's own `timeout` ended it (not the check's or the part's deadline): the worker was killed."""


@dataclass
class Limits:
    """Resource limits of a worker, set by the worker on itself before it imports student code (its time limits:
    autograder.public.limits)."""
    memory_bytes: int = 3 * 1024 ** 3      # address space: torch needs about 1 GiB to import
    file_bytes: int = 16 * 1024 ** 2       # the largest file it may write (its output file included)
    processes: int = 64                    # per user: enforced for the sandbox user, not for root
    # A backstop: the wall-clock limits of each call, check and part come first.
    cpu_seconds: int = field(default_factory=lambda: time_limits.LIMITS.cpu)
    # All the worker's processes together (proportional set size) and the files its user keeps in memory-backed
    # temporary folders: watched while the grader waits for a reply (no cgroup is assumed to be delegated).
    tree_memory_bytes: int = field(default_factory=lambda: TREE_MEMORY_BYTES)
    # What it keeps on disk (disk_usage), all its writable places together: watched with its memory.
    disk_bytes: int = field(default_factory=lambda: time_limits.WORKER_DISK_BYTES)
    disk_files: int = field(default_factory=lambda: time_limits.WORKER_DISK_FILES)


class Isolation(Protocol):
    """How a worker is kept apart from the process that starts it. The grader decides it per machine
    (the grader's isolation: a dedicated user, namespaces); where students run their own code on their
    own machine, a separate process with limits is enough (SEPARATE_PROCESS)."""
    uid: int | None              # the sandbox user, whose processes are the worker's (None: no dedicated user)
    gid: int | None              # the sandbox user's group, the only one that may read the staged module
    prefix: tuple[str, ...]      # put before the worker's command line (namespaces, the user switch)
    pid_namespace: bool          # the prefix makes a PID namespace: the worker runs under autograder/worker/init.py
    private_tmp: bool            # the prefix mounts a private /dev/shm (and /var/tmp) in the worker's namespace
    note: str                    # one line for the person running the checks

    def owns(self, path: Path) -> None:
        """Give `path` to the sandbox user (a no-op without one)."""

    def sweep(self, keep: frozenset[int] = frozenset()) -> int:
        """Kill every process the sandbox user left behind but those in `keep` (the part's zygote); return how many
        (0 without one)."""


@dataclass(frozen=True)
class SeparateProcess:
    """Isolation by a separate process with resource limits only: no user switch, no namespaces."""
    uid: None = None
    gid: None = None
    prefix: tuple[str, ...] = ()
    pid_namespace: bool = False
    private_tmp: bool = False
    note: str = "isolation: separate process with limits"

    def owns(self, path: Path) -> None:
        pass

    def sweep(self, keep: frozenset[int] = frozenset()) -> int:
        return 0


SEPARATE_PROCESS = SeparateProcess()


class StudentWorker(Protocol):
    """What the engine needs of a worker serving one part: the sandboxed process below, or the in-process
    stand-in of the kit's benchmarks."""
    import_error: StudentError | None   # the student's module could not be imported (then nothing runs)
    dead_reason: str | None             # why the worker stopped, once it has
    deadline: Deadline | None           # the part's: no start-up and no call of this worker goes past it
    on_progress: Callable[[int, int, float], None] | None   # told (epoch, epochs, loss) after each training epoch

    @property
    def alive(self) -> bool: ...

    def call(self, recipe: str, timeout: float | None = None, deadline: Deadline | None = None,
             evaluate: Evaluate | None = None, **kwargs):
        """Run `recipe` with `kwargs` within `timeout` seconds (default: LIMITS.call), `deadline` and the part's;
        a training recipe's epochs are judged by `evaluate` (Worker.call)."""

    def restart(self) -> None: ...

    def serve_hidden(self) -> None:
        """The part's hidden checks come next: from now on each worker is one that never served a public check and
        holds the references of earlier parts (the public checks' workers hold none)."""

    def pause(self) -> None:
        """End every process of the worker until restart() or serve_hidden(): the part waits, holding nothing, while
        the other parts' public checks run (runner.PartGrade)."""

    def close(self) -> None: ...


@dataclass
class ZygoteState:
    """A zygote (autograder/worker/main.py) as the grader holds it: the process as started, its control socket, the
    file its output goes to and, from its first fork on, (pid, start time) of its processes (Worker._find_zygote).
    `folder` is its current folder, where output.txt lies: the folders of the workers forked from it lie below it
    (Landlock lets them write there); `modules` are the parts it serves."""
    folder: Path
    modules: tuple[str, ...]
    proc: subprocess.Popen | None = None
    control: socket.socket | None = None
    stdout: IO | None = None
    chain: tuple[tuple[int, int], ...] | None = None


class SharedZygote(ZygoteState):
    """One zygote for every part of a student's `check` (autograder.public.checker), so that torch is imported once:
    started first, beside the checker's own imports, and handed to each part's Worker (`shared`), which forks its
    workers from it and leaves it running when it closes. A part whose code ends it costs the parts after it a fresh
    one. Only without a sandbox (SEPARATE_PROCESS): in a grade no two parts share a process (Worker)."""

    @classmethod
    def start(cls, folder: Path, modules: tuple[str, ...], runtime: Path, limits: Limits | None = None) \
            -> SharedZygote:
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
    python = [sys.executable, "-I", "-S", "-B", str(runtime / "autograder" / "worker" / "init.py"), "--"] \
        if isolation.pid_namespace else [sys.executable]
    modules = [argument for module in zygote.modules for argument in ("--module", module)]
    cmd = [*isolation.prefix, *python, "-I", "-B", "--check-hash-based-pycs", "always",
           "-X", "faulthandler", str(runtime / "autograder" / "worker" / "main.py"),
           *modules, "--control", str(theirs.fileno()), "--memory", str(limits.memory_bytes),
           "--cpu", str(limits.cpu_seconds), "--file-size", str(limits.file_bytes), "--processes", str(limits.processes),
           *(["--own-shm"] if isolation.private_tmp else []),
           *(["--own-pids"] if isolation.pid_namespace else [])]
    try:
        zygote.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=zygote.stdout, stderr=subprocess.STDOUT,
                                       pass_fds=(theirs.fileno(),), cwd=zygote.folder, start_new_session=True,
                                       env=environment)
    finally:
        theirs.close()
    zygote.control, zygote.chain = ours, None


def worker_environment(home: Path) -> dict:
    """A worker's scrubbed environment: nothing of the grader's but what Python and torch need (a forked worker
    makes its own folder its home and temporary folder: autograder.worker.main.become_worker)."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0", "CUDA_VISIBLE_DEVICES": os.environ.get("CAPTIONKIT_WORKER_CUDA", ""),
            **{name: os.environ[name] for name in ("CAPTIONKIT_WORKER_DROP",) if name in os.environ}}   # tests only


class _OfZygote:
    """A Worker attribute kept in its ZygoteState (its own, or the SharedZygote it was given) under `field_name`."""

    def __init__(self, field_name: str):
        self.field_name = field_name

    def __get__(self, worker, owner=None):
        return self if worker is None else getattr(worker.state, self.field_name)

    def __set__(self, worker, value) -> None:
        setattr(worker.state, self.field_name, value)


# evaluate(epoch, epochs, tokens) -> True to stop a training run: the grader's judgement of the captions a training
# recipe sent after an epoch (autograder.grader.training); tokens is a (N, T) long tensor or {name: such tensor}.
Evaluate = Callable[[int, int, object], bool]

# (part, submission folder, scratch folder, {earlier part: reference source}, the part's deadline) -> a worker
WorkerFactory = Callable[[str, Path, Path, "dict[str, str]", "Deadline | None"], StudentWorker]


class Worker:
    """One worker process serving one part's recipes over a pair of pipes.

    `scratch` is this part's folder: staging/ (the module, read-only to the worker), work/ (the worker's
    current and home folder, owned by the sandbox user) and output.txt (what the student's code printed).
    `references` maps earlier parts' names to their reference source, installed in the memory of the workers that
    serve the hidden checks (serve_hidden) and of no other: only the training recipes use them, and whatever a worker
    holds, its code can show in a public check's feedback, visible before the due date.
    `deadline` is the part's: no start-up (a restart included) and no call goes past it.
    `shared`: the zygote its workers are forked from, shared with other parts (SharedZygote; `scratch` lies below its
    folder); by default the part's own.
    """
    proc = _OfZygote("proc")         # the zygote's process, as started (start_zygote)
    control = _OfZygote("control")   # the zygote's control socket
    stdout = _OfZygote("stdout")     # the file its output (and every worker's) goes to
    zygote = _OfZygote("chain")      # see _find_zygote

    def __init__(self, module: str, submission: Path, scratch: Path, runtime: Path, isolation: Isolation,
                 references: dict[str, str] | None = None, limits: Limits | None = None,
                 deadline: Deadline | None = None, shared: SharedZygote | None = None):
        if shared is not None and (isolation != SEPARATE_PROCESS or module not in shared.modules):
            raise ValueError(f"shared: a zygote shared by parts serves them without a sandbox (SEPARATE_PROCESS) "
                             f"and must have been started for {module!r}")
        self.module = module
        self.scratch = Path(scratch)
        self.shared = shared is not None
        self.state = shared if shared is not None else ZygoteState(self.scratch, (module,))
        self.runtime, self.isolation = Path(runtime), isolation
        self.references = references or {}
        self.hidden_phase = False   # the running worker serves the hidden checks (and so holds the references)
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_progress = None   # set by the engine: on_progress(epoch, epochs, loss) after each training epoch
        self.child: int | None = None                  # the running worker's pid, as the zygote sees it
        self.child_started: int | None = None          # its start time (outside a PID namespace)
        self.became = False                            # the running worker is the zygote itself
        self.starts = 0                                # workers started for the part
        self.sent = 0                                  # requests sent: each reply must name the last one (call)
        self.work = self.requests = self.replies = None
        self.writable: list[str] | None = None   # where the sandbox user's files may lie (writable_folders), found once
        self.disk_since = 0                       # when the running worker started, in file-time ns (_start)
        self.dead_reason: str | None = None
        self.dead_shown: str | None = None   # the reason as a hidden check may show it (WorkerDied.shown)
        self.import_error: StudentError | None = None
        self.over_budget: tuple[str, str] | None = None   # why a reply broke its budget: the part's grade ends
        self.scratch.mkdir(parents=True, exist_ok=True)
        os.chmod(self.scratch, 0o711)
        self.staging = stage(module, Path(submission), self.scratch / "staging")
        # The staged module is the grader's alone (0700): its text goes to the worker through the start message, so
        # no other process, of this sandbox user or another, can open it by its path.
        os.chmod(self.staging, 0o700)
        self.source = (self.staging / f"{module}.py").read_bytes().decode("utf-8", errors="replace")
        # Every op some recipe of this part bans, and where the module's source names it (or the ban's machinery).
        forbidden_ops = tuple(sorted({op for name, fn in recipes.load(module).items() if name.startswith(f"{module}.")
                                      for op in fn.forbid}))
        self.banned = banned_uses(self.source, forbidden_ops)
        self.reach = grader_reach(self.source)   # reaches into the grader's worker: no result counts
        try:
            self._start()
        except BaseException:  # never leave a worker running behind an error of the grader's
            self.kill("the grader failed while starting the worker")
            raise

    # -- lifecycle -----------------------------------------------------------------------------
    # A part's first worker is forked from a zygote (autograder/worker/main.py), which imports torch once; its second
    # (the hidden checks') is the zygote itself, so two workers cost one import. The zygote runs as the sandbox user,
    # never imports student code before it becomes a worker, and is not dumpable until then. Student code can signal
    # it (it is of the same user), which costs only its own part: a zygote that no longer answers is replaced.
    def _start(self) -> None:
        work = self.scratch / "work"
        empty_folder(work)   # kept, not made anew: a zygote's namespace may hold its private tmpfs mounted there
        os.chmod(work, 0o700)
        self.isolation.owns(work)
        self.work = work
        # The worker's files in the shared folders are those changed from now on (older ones are another worker's).
        self.disk_since = os.stat(work).st_ctime_ns
        config = time_limits.LIMITS
        deadline = earliest(Deadline.after(config.seconds(config.startup), "the worker did not start in time"),
                            self.deadline)
        try:
            self._fork(deadline)
            startup = max(deadline.left(), 1.0)
            references = self.references if self.hidden_phase else {}
            protocol.send(self.requests, {"references": references, "source": self.source}, timeout=startup)
            hello = protocol.receive(self.replies, timeout=startup, watch=self._watch_memory,
                                     budget=protocol.REPLY)
        except protocol.ChannelTimeout:
            self.kill(deadline.reached)
            return
        except (protocol.ChannelClosed, protocol.MessageTooLarge, OSError, ZygoteLost) as exc:
            self.kill(f"the worker did not start ({type(exc).__name__})")
            return
        except OverMemory as exc:
            self.kill(str(exc), shown=exc.shown)
            return
        except Exception:  # noqa: BLE001 (an unreadable message: the worker's, so the student's)
            self.kill("the worker sent a malformed start-up message")
            return
        if type(hello) is dict and hello == {"ready": True}:
            return
        error = _error_fields(hello.get("error"), self.module, self.source) if isinstance(hello, dict) and set(hello) == {"ready", "error"} \
            and hello["ready"] is False else None
        if error is None:
            self.kill("the worker sent a malformed start-up message")
            return
        self.import_error = StudentError(*error)
        self.kill(f"{self.module}.py could not be imported: {self.import_error}",
                  shown=f"{self.module}.py could not be imported")   # not even the kind where it is hidden (A58)

    def _fork(self, deadline: Deadline) -> None:
        """A worker forked from the zygote, connected to this grader by two new pipes; a fresh zygote first when
        there is none or the one there was is gone (a zygote that stops answering is ended by the request that
        waited for it: _control)."""
        fresh = not self._zygote_running()
        if fresh:
            self._end_zygote()
            self._start_zygote()
        timeout = deadline.left() if fresh else min(deadline.left(), FORK_SECONDS)
        # The workers of the public checks and of the grader's rounds of them are forked (runner.grade_part); the
        # hidden checks' are a zygote itself (the running one, else a fresh one): a zygote beside a worker costs memory
        # (the pages the worker writes are copied), so it never sits beside the part's largest workers, the hidden
        # checks' training ones.
        become, self.starts = self.hidden_phase and not self.shared, self.starts + 1
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            answer = self._control({"become" if become else "fork": str(self.work), "module": self.module}, timeout,
                                   fds=(req_r, rep_w))
        except BaseException:
            for fd in (req_w, rep_r):
                os.close(fd)
            raise
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.requests, self.replies = protocol.nonblocking(req_w), rep_r
        if type(answer.get("pid")) is not int:
            raise ZygoteLost("the zygote did not fork")
        self.child, self.became = answer["pid"], become
        self.child_started = start_time(self.child) if not self.isolation.pid_namespace else None
        if self.zygote is None:   # found at its first fork: no student code has run yet
            self.zygote = self._find_zygote()

    def _start_zygote(self) -> None:
        start_zygote(self.state, self.runtime, self.isolation, self.limits, worker_environment(self.work))

    def _control(self, request: dict, timeout: float, fds: tuple[int, ...] = ()) -> dict:
        """Send the zygote one request and return its answer; ZygoteLost when it has none, ChannelTimeout when it
        has none within `timeout` seconds."""
        if self.control is None:
            raise ZygoteLost("no zygote")
        self.control.settimeout(max(timeout, 0.01))
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            answer = self.control.recv(4096)
        except TimeoutError:   # a late answer must never be read as the next request's: this zygote is done
            self.control.close()
            self.control = None
            raise protocol.ChannelTimeout("the zygote did not answer in time") from None
        except OSError as exc:
            raise ZygoteLost(f"the zygote is gone ({type(exc).__name__})") from None
        try:
            answer = json.loads(answer) if answer else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ZygoteLost("the zygote is gone")
        return answer

    def _find_zygote(self) -> tuple[tuple[int, int], ...]:
        """(pid, start time) of the zygote and, in a PID namespace, of its init: the sandbox user's processes a
        sweep between two workers of the part leaves running."""
        chain = [self.proc.pid]
        if self.isolation.pid_namespace:   # unshare (root) -> init -> zygote
            for _ in range(2):
                below = children_of(chain[-1])
                if len(below) != 1:
                    raise ZygoteLost("the zygote's process could not be found")
                chain.append(below[0])
            chain = chain[1:]
        return tuple((pid, start_time(pid)) for pid in chain)

    def _zygote_running(self) -> bool:
        """The zygote is running and is still the process found at its first fork (a pid is never trusted alone)."""
        if self.proc is None or self.proc.poll() is not None or self.control is None or self.became:
            return False
        return self.zygote is None or all(start_time(pid) == started for pid, started in self.zygote)

    @property
    def alive(self) -> bool:
        return self.child is not None and self.dead_reason is None

    def _death(self, kind: type[WorkerDied] = WorkerDied) -> WorkerDied:
        """The exception that says why the worker is gone (kill's reason and what a hidden check may show of it)."""
        return kind(self.dead_reason or "the worker is not running", self.dead_shown)

    def kill(self, reason: str, shown: str | None = None) -> None:
        """Kill the running worker (its process group, through the zygote), then every process of the sandbox user
        but the zygote (and its init); remember why (and `shown`, the reason without what the student's code chose:
        WorkerDied.shown). Without a zygote that answers, kill them all (_end_zygote)."""
        if self.dead_reason is None:
            self.dead_reason, self.dead_shown = reason, reason if shown is None else shown
        self._close_channel()
        try:
            if self.became:
                raise ZygoteLost("the worker is the zygote")
            if self.child is not None:
                self._control({"kill": self.child}, KILL_SECONDS)
                self.child = None
            if not (self._zygote_running() and self.zygote is not None):
                raise ZygoteLost("the zygote is gone")
            self.isolation.sweep(keep=frozenset(pid for pid, _ in self.zygote))
        except (ZygoteLost, protocol.ChannelTimeout):
            self._end_zygote()

    def _end_zygote(self) -> None:
        """Kill the zygote's process group, the running worker's and every process of the sandbox user."""
        self._close_channel()
        groups = [self.proc.pid] if self.proc is not None else []
        # Outside a PID namespace (whose end takes every process in it) the worker's group is not the zygote's; its pid
        # is the one the zygote saw, checked to be the same process before it is signalled.
        if self.child is not None and not self.isolation.pid_namespace and start_time(self.child) == self.child_started:
            groups.append(self.child)
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.isolation.sweep()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if self.control is not None:
            self.control.close()
        if self.stdout is not None:
            self.stdout.close()
        self.proc = self.control = self.stdout = self.zygote = self.child = None
        self.became = False

    def _close_channel(self) -> None:
        for fd in ("requests", "replies"):
            if getattr(self, fd, None) is not None:
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                setattr(self, fd, None)

    def _why_ended(self, seconds: float = 10) -> str:
        """Why the running worker ended (describe_exit), from its exit status as the zygote collected it within
        `seconds`."""
        if self.became:   # the zygote itself: its status is the started process's (through init in a PID namespace)
            try:
                code = self.proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                code = None
            return describe_exit(code, self.isolation.pid_namespace)
        try:
            status = self._control({"wait": self.child, "seconds": seconds}, seconds + KILL_SECONDS).get("status")
        except (ZygoteLost, protocol.ChannelTimeout):
            return "the worker ended with the zygote it was forked from (killed by the student's code or for memory)"
        return describe_exit(os.waitstatus_to_exitcode(status) if type(status) is int else None)

    def close(self) -> None:
        if self.dead_reason is None:
            self.dead_reason = "closed"
        if self.shared:   # its own worker only: the zygote serves the parts after it
            self.kill(self.dead_reason)
        else:
            self._end_zygote()
        remove_tree(self.work)

    def restart(self) -> None:
        """A fresh worker for the same part (after a crash or a timeout in one check, or before its hidden checks)."""
        self.kill("restarted")
        if self.over_budget is not None:   # no fresh worker for the rest of the part: each check fails as this one did
            self.dead_reason, self.dead_shown = self.over_budget
            return
        self.dead_reason = self.dead_shown = None
        self._start()

    def pause(self) -> None:
        """End the running worker and the zygote until restart() or serve_hidden() starts a fresh one (a zygote
        waiting for a part's second phase would hold its memory while the other parts run)."""
        self.kill("paused")
        if not self.shared:
            self._end_zygote()

    def serve_hidden(self) -> None:
        """A fresh worker, with the references, for the part's hidden checks (no-op once they are being served)."""
        if self.hidden_phase:
            return
        self.hidden_phase = True
        self.restart()

    # -- calls ---------------------------------------------------------------------------------
    def call(self, recipe: str, timeout: float | None = None, deadline: Deadline | None = None,
             evaluate: Evaluate | None = None, **kwargs):
        """Run `recipe` on the student's module with `kwargs`; return its (plain-data) result.

        A training recipe may send, after an epoch, the captions its model gives the hidden test grids; the
        grader answers `evaluate(epoch, epochs, tokens)` (False without `evaluate`): True stops the training run.
        Each epoch is judged at most once and in order, so a worker learns at most one bit per epoch.

        The call ends by the earliest of its own `timeout` seconds (default LIMITS.call, x LIMITS.scale), `deadline`
        (the check's, passed by autograder.public.runner) and the part's. Raises StudentError when the student's
        code raised, WorkerDied when the worker is gone or one of those was reached (it is then killed): TimedOut
        when it was the call's own `timeout`."""
        if not self.alive:
            raise self._death()
        config = time_limits.LIMITS
        seconds = config.seconds(config.call if timeout is None else timeout)
        own = Deadline.after(seconds, f"timed out after {seconds:.0f} s")
        deadline = earliest(own, deadline, self.deadline)
        ended = TimedOut if deadline is own else WorkerDied
        if deadline.passed:
            self.kill(deadline.reached)
            raise self._death(ended)
        try:
            self.sent += 1
            protocol.send(self.requests, {"recipe": recipe, "kwargs": kwargs, "seq": self.sent},
                          timeout=deadline.left())
            reply = protocol.receive(self.replies, timeout=max(deadline.left(), 0.0), watch=self._watch_memory,
                                     budget=protocol.REPLY)
            judged = 0   # the last epoch whose captions were judged
            while type(reply) is dict and "progress" in reply:   # a training epoch ended: show it, read on
                epoch, tokens = progress_of(reply), judged_tokens(reply)
                if epoch is None or tokens is MALFORMED or (tokens is not None and epoch[0] <= judged):
                    self.kill("sent a malformed progress message")
                    raise self._death()
                if self.on_progress is not None:
                    self.on_progress(*epoch)
                if tokens is not None:
                    judged = epoch[0]
                    stop = _judge(evaluate, epoch, tokens)
                    protocol.send(self.requests, {"stop": stop}, timeout=max(deadline.left(), 0.0))
                reply = protocol.receive(self.replies, timeout=max(deadline.left(), 0.0), watch=self._watch_memory,
                                         budget=protocol.REPLY)
            # Once more at the reply, in the worker's own folder (its TMPDIR): files written faster than the watch's
            # period (a page cache takes a gigabyte in well under WATCH_EVERY) would otherwise pass a call unseen.
            # The shared temporary folders are counted by the watch alone: Landlock gives the worker no right there.
            self._watch_disk(own_folder_only=True)
        except protocol.ChannelTimeout:
            self.kill(deadline.reached)
            raise self._death(ended)
        except EvaluationFailed as exc:   # the grader's own error: reported as such, not as the worker's
            self.kill("the grader could not judge a training epoch")
            raise exc.__cause__ from None
        except OverMemory as exc:
            self.kill(str(exc), shown=exc.shown)
            raise self._death()
        except (protocol.ChannelClosed, BrokenPipeError):
            why = self._why_ended()
            self.kill(why, shown=shown_exit(why))
            raise self._death()
        except protocol.OverBudget as exc:   # the grader's own sentence: no text of the worker's
            self.over_budget = (f"sent a reply over the grader's budget: {exc}", "sent a reply over the grader's budget")
            self.kill(*self.over_budget)
            raise self._death()
        except Exception as exc:  # noqa: BLE001 (an unreadable or oversized reply)
            self.kill(f"sent an unreadable reply ({type(exc).__name__})", shown="sent an unreadable reply")
            raise self._death()
        # The reply names the request it answers: one written on the pipe by the student's code (which shares the
        # worker's process) before the recipe's own puts every later reply a request late, and is refused here.
        if isinstance(reply, dict) and set(reply) == {"error", "seq"} and reply["seq"] == self.sent:
            error = _error_fields(reply["error"], self.module, self.source)
            if error is not None:
                raise StudentError(*error)
        elif isinstance(reply, dict) and set(reply) == {"ok", "seq"} and reply["seq"] == self.sent \
                and _plain(reply["ok"]):
            self._refuse_banned(recipe)
            return reply["ok"]
        self.kill("sent a malformed reply")
        raise self._death()

    def _watch_memory(self) -> None:
        """Raise OverDisk when the worker's files take more than their limit, OverMemory when its processes and its
        user's files in memory use more than theirs."""
        if self.proc is None:
            return
        self._watch_disk()
        limit = self.limits.tree_memory_bytes
        # Resident memory bounds the proportional set size from above and costs microseconds a process to read,
        # where smaps_rollup walks a torch process's page tables (about 15 ms): the exact sum only near the limit.
        if tree_memory(self.proc.pid, self.isolation.uid, exact=False) <= limit:
            return
        used = tree_memory(self.proc.pid, self.isolation.uid)
        if used > limit:
            raise OverMemory(f"the worker's processes used {used / 2 ** 30:.1f} GiB of memory together "
                             f"(the limit is {self.limits.tree_memory_bytes / 2 ** 30:.1f} GiB)")

    def _watch_disk(self, own_folder_only: bool = False) -> None:
        """Raise OverDisk when the worker's files take more than their limit; `own_folder_only`: counting only those
        in its own folder (microseconds, where the machine's shared temporary folders can take milliseconds)."""
        if self.proc is None or self.work is None:
            return
        if self.writable is None:
            self.writable = writable_folders(self.isolation.uid) if self.isolation.uid is not None else []
        used, files = disk_usage(self.isolation.uid, self.work, [] if own_folder_only else self.writable,
                                 self.disk_since)
        if used > self.limits.disk_bytes or files > self.limits.disk_files:
            raise OverDisk(f"the worker's files took more than its disk limit ({self.limits.disk_bytes / 2 ** 20:.0f}"
                           f" MiB or {self.limits.disk_files} files): {used / 2 ** 20:.0f} MiB in {files} files")

    def _refuse_banned(self, recipe: str) -> None:
        """The grader's own half of the ban (autograder.public.source_scan): a recipe that bans an op earns nothing
        from a module whose source names it, whatever the worker's half let through. No recipe of any part earns
        anything from a module that reaches into the grader's worker, which could make a recipe judge itself."""
        if self.reach is not None:
            raise StudentError("ForbiddenOpError", f"your module's source uses the grader's worker ({self.reach}): "
                               "a module that reaches into it could make a check judge itself, so no check of this "
                               "part earns credit")
        for op in getattr(recipes.RECIPES.get(recipe), "forbid", ()):
            if op in self.banned:
                raise StudentError("ForbiddenOpError", f"your module's source uses {READABLE[op]} or the grader's "
                                   f"ban of it ({self.banned[op]}); this check compares against it, so it earns no "
                                   "credit here")


# The exception kinds a message may name: Python's built-in exceptions and the ban's own error. Any other name
# (the worker reduces every exception to one of these, but the student's code can replace the worker's reducer)
# becomes "Exception": a class name is text the student's code chose, and may carry a hidden check's inputs.
KINDS = frozenset(name for name, value in vars(builtins).items()
                  if isinstance(value, type) and issubclass(value, BaseException)) | {"ForbiddenOpError"}


def _error_fields(error, module: str, source: str) -> tuple[str, str, str] | None:
    """(kind, message, where) of a well-formed error message from the worker about the module `module` (its text
    `source`), or None. The message is cleaned and capped here again (the worker's own cleaning runs beside the
    student's code); of the worker's traceback text only the line numbers of `module`'s own lines are kept, and
    `where` is the grader's text of those lines (student_frames)."""
    if not (isinstance(error, dict) and set(error) <= {"type", "message", "where"}
            and all(type(v) is str for v in error.values())):
        return None
    kind = error.get("type", "Exception")
    return (kind if kind in KINDS else "Exception", clean(error.get("message", ""), 800),
            student_frames(error.get("where", ""), module, source))


# A frame as the worker writes it (traceback.format_list: two spaces, then the file, line and function). Only the
# file and the line are read, and only a line of the student's own module counts: the file name, the function name
# and the line's text are the worker's to choose (code compiled under any name, a replaced reducer), and would carry
# whatever it holds, a hidden check's inputs included.
WORKER_FRAME = re.compile(r'^  File "([^"\n]*)", line (\d{1,9}), in ', re.MULTILINE)
FRAMES_KEPT = 3   # the innermost frames of the student's module a traceback shows


def student_frames(where: str, module: str, source: str) -> str:
    """The frames of the worker's traceback text `where` that name a line of the staged module `module` (whose text
    is `source`), innermost last, at most FRAMES_KEPT, written by the grader from its own copy of the module as
    traceback.format_list writes a frame (`File "bleu.py", line 42, in _bleu`, then the line's text); "" when none
    does. The function is the innermost definition around the line in the grader's parse of the module."""
    if not where:
        return ""
    lines, functions = _module_lines(source)
    kept = [int(line) for file, line in WORKER_FRAME.findall(where)
            if file == f"{module}.py" and 1 <= int(line) <= len(lines)][-FRAMES_KEPT:]
    return "".join(f'  File "{module}.py", line {n}, in {functions.get(n, "<module>")}\n'
                   + (f"    {clean(lines[n - 1].strip(), 200)}\n" if lines[n - 1].strip() else "") for n in kept)


@functools.lru_cache(maxsize=8)
def _module_lines(source: str) -> tuple[list[str], dict[int, str]]:
    """The module's lines as Python counts them (only a line feed, a carriage return or both end one) and, for each
    line inside a function or class, the innermost one's name (a lambda's is "<lambda>")."""
    lines = re.split(r"\r\n|\r|\n", source)
    if lines and lines[-1] == "":
        lines.pop()
    functions: dict[int, str] = {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):   # not Python this interpreter reads: no names
        return lines, {n: "?" for n in range(1, len(lines) + 1)}
    for node in ast.walk(tree):   # outer definitions before inner ones, which then overwrite them
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            name = getattr(node, "name", "<lambda>")
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                functions[n] = name
    return lines, functions


MAX_DEPTH = 20


def _plain(value, depth: int = 0) -> bool:
    """Whether a reply's value is plain data the checks may compute with: exact built-in types, and tensors
    whose elements all lie in their own storage (a zero-stride view of one element would make the grader
    allocate for every index it claims)."""
    if depth > MAX_DEPTH:
        return False
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(type(k) in (str, int, tuple) and _plain(k, depth + 1) and _plain(v, depth + 1)
                   for k, v in value.items())
    torch = sys.modules.get("torch")   # a reply holds a tensor only if unpickling it imported torch
    if torch is not None and type(value) is torch.Tensor:
        return value.layout == torch.strided and not value.requires_grad and \
            value.numel() * value.element_size() <= value.untyped_storage().nbytes()
    return False


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW   # a folder opened to be read, never through a link

MEMORY_TEMP_DIRS = ("/dev/shm",)   # temporary folders whose files take memory, not disk
# The machine's folders every user may write to (autograder.grader.isolation.sweep empties them of the sandbox user's).
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def _walk(roots: list[tuple[str, bool]], uid: int | None, since: int = 0,
          every_folder: bool = False) -> tuple[int, int]:
    """(bytes, entries) of what lies beneath `roots` ((folder, count everything in it)) and is counted: everything
    where the flag is set, else what `uid` owns and changed (st_ctime, which no user can set back) at `since` (ns) or
    later; beneath a folder without the flag only `uid`'s folders are searched (every folder with `every_folder`).
    The worker chooses how deep its folders go and how long their names are: depth first, each folder opened
    relative to its parent (no path grows past PATH_MAX, no recursion), and FolderTooDeep for a folder of the
    worker's nested deeper than WORKER_FOLDER_DEPTH, so that no file can lie where this walk does not look."""
    used = files = 0
    for root, everything in roots:
        try:
            folder: int | None = os.open(root, _DIRECTORY)
        except OSError:
            continue
        frames: list[tuple[int, list[str]]] = []   # the open folders of the current path, each with what is left
        try:
            while True:
                if folder is not None:
                    below = []
                    for entry in _entries(folder):
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        owned = info.st_uid == uid
                        if everything or (owned and info.st_ctime_ns >= since):
                            used, files = used + info.st_blocks * 512, files + 1
                        if not stat.S_ISDIR(info.st_mode) or not (everything or owned or every_folder):
                            continue
                        if len(frames) + 1 < time_limits.WORKER_FOLDER_DEPTH:
                            below.append(entry.name)
                        elif everything or owned:
                            os.close(folder)
                            raise FolderTooDeep(f"the worker's folders nest more than "
                                                f"{time_limits.WORKER_FOLDER_DEPTH} levels deep")
                    frames.append((folder, below))
                parent, below = frames[-1]
                if below:
                    try:
                        folder = os.open(below.pop(), _DIRECTORY, dir_fd=parent)
                    except OSError:
                        folder = None
                    continue
                os.close(parent)
                frames.pop()
                if not frames:
                    break
                folder = None
        finally:
            for parent, _ in frames:
                os.close(parent)
    return used, files


# Folders one search for world-writable folders enters at most: bounded whatever other users keep in the temporary
# folders; breadth first, so shallow ones (/tmp/.X11-unix) are found first.
SEARCHED_FOLDERS = 20_000
# How long one such search is reused. The search walks every folder of another user that a sandbox user may enter (a
# /tmp holding a virtual environment or a test run's folders: thousands, about half a second), and a grade sweeps
# before every worker; a folder made since, directly in a temporary folder or in a writable one, is found at once
# (each call looks into those), one deeper in another user's folder at the next search. One walk serves every sandbox
# user (the sweep of a batch's 16 slots walked /tmp 16 times, 13.5 s on a /tmp of 12 GB).
SEARCH_REUSED_SECONDS = 300.0
_searches: dict[tuple[str, ...], tuple[float, list[tuple[str, frozenset[int]]]]] = {}


def writable_folders(uid: int, roots: tuple[str, ...] | None = None) -> list[str]:
    """`roots` (default: the disk-backed TEMP_DIRS) and the folders beneath them that every user may write to (sticky
    /tmp-like ones, /tmp/.X11-unix, a test's drop folder), found by a walk through every folder of another user
    that user `uid` may enter (reused for SEARCH_REUSED_SECONDS), and by a look into each writable one every call:
    the places besides its own where its files can lie (disk_usage looks only there, and the grader's sweep empties
    them of its files)."""
    roots = tuple(roots if roots is not None else (folder for folder in TEMP_DIRS if folder not in MEMORY_TEMP_DIRS))
    searched_at, searched = _searches.get(roots, (None, []))
    if searched_at is None or time.monotonic() - searched_at > SEARCH_REUSED_SECONDS:
        searched = _search_writable_by_owners(roots, SEARCHED_FOLDERS)
        _searches[roots] = (time.monotonic(), searched)
    found = list(dict.fromkeys([*roots, *(folder for folder, owners in searched if uid not in owners)]))
    looked = [path for folder in found for path, info in _enterable_folders(folder)
              if info.st_uid != uid and info.st_mode & 0o002]   # made since the walk, in a writable folder
    return list(dict.fromkeys([*found, *looked]))


def _enterable_folders(folder: str) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of each folder directly in `folder` that every user may enter (links not followed)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if entry.is_dir(follow_symlinks=False) and info.st_mode & 0o001:
            found.append((entry.path, info))
    return found


def _search_writable_by_owners(roots: tuple[str, ...], folders: int) -> list[tuple[str, frozenset[int]]]:
    """(folder, the owners of it and of every folder between it and its root) of each folder beneath `roots` that
    every user may enter and write to, breadth first over at most `folders` folders that every user may enter. User
    u never enters its own folders (they are disk_usage's), so what the walk finds for u are the folders whose owners
    leave u out."""
    found = []
    queue = collections.deque((root, frozenset()) for root in roots)
    for _ in range(folders):
        if not queue:
            break
        folder, owners = queue.popleft()
        for path, info in _enterable_folders(folder):
            below = owners if info.st_uid in owners else owners | {info.st_uid}
            queue.append((path, below))
            if info.st_mode & 0o002:
                found.append((path, below))
    return found


def disk_usage(uid: int | None, own: Path, writable: list[str] = (), since: int = 0) -> tuple[int, int]:
    """(bytes, files and folders) a worker keeps: everything in its folder `own` and, with a sandbox user `uid`,
    what that user owns in the `writable` folders (writable_folders) and beneath, changed at `since` (ns, the
    worker's start) or later: files an earlier worker of the user left are not this one's (without a user, files
    there cannot be told from the grader's). The memory-backed temporary folders are tree_memory's."""
    roots = [(str(own), True)] + [(folder, False) for folder in (writable if uid is not None else ())]
    return _walk(roots, uid, since)


def empty_folder(folder: Path) -> None:
    """`folder` as an empty folder: made if missing, else emptied (never followed through a link inside it)."""
    folder.mkdir(exist_ok=True)
    for entry in list(os.scandir(folder)):
        remove_tree(entry.path)



def remove_tree(path: str | os.PathLike) -> None:
    """Delete `path` and everything beneath it (a file or a link: just that), never following a link and never
    raising. A worker chooses how deep its folders go: shutil.rmtree recurses once a level before Python 3.12 (a
    RecursionError it does not catch), and a path thousands of levels long is past PATH_MAX. Here each folder met
    is first moved up into `path` under a fresh name, then emptied: no recursion, no path longer than two names, at
    most two folders open at once."""
    path = os.fspath(path)
    try:
        if not os.path.isdir(path) or os.path.islink(path):
            os.unlink(path)
            return
        top = os.open(path, _DIRECTORY)
    except OSError:
        return
    try:
        tag, moved = os.urandom(8).hex(), 0
        pending = [entry.name for entry in _entries(top) if _is_folder(entry)]
        for entry in _entries(top):
            if not _is_folder(entry):
                _unlink(entry.name, top)
        while pending:
            name = pending.pop()
            try:
                folder = os.open(name, _DIRECTORY, dir_fd=top)
            except OSError:
                continue
            try:
                for entry in _entries(folder):
                    if _is_folder(entry):
                        moved += 1
                        try:
                            os.rename(entry.name, f".rm-{tag}-{moved}", src_dir_fd=folder, dst_dir_fd=top)
                            pending.append(f".rm-{tag}-{moved}")
                        except OSError:
                            pass
                    else:
                        _unlink(entry.name, folder)
            finally:
                os.close(folder)
            try:
                os.rmdir(name, dir_fd=top)
            except OSError:
                pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _entries(folder_fd: int) -> list[os.DirEntry]:
    try:
        with os.scandir(folder_fd) as entries:
            return list(entries)
    except OSError:
        return []


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _unlink(name: str, folder_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=folder_fd)
    except OSError:
        pass


def _proportional_bytes(pid: int) -> int:
    """The process's proportional set size (shared pages divided among their users); where that is unreadable
    (another user's process needs CAP_SYS_PTRACE, which Docker's default set lacks), its resident memory less
    its shared file pages, which counts a forked child's copy-on-write pages once per process (an over-count)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
            return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _resident_bytes(pid: int) -> int:
    """The process's resident set size, read from /proc/PID/statm (readable for every process): at least its
    proportional set size and at least what _proportional_bytes falls back to."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _stat_field(pid: int, index: int) -> int | None:
    """Field `index` of /proc/PID/stat, counted from the one after the command name (0: the state)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[index])
    except (OSError, ValueError, IndexError):
        return None


def _session_of(pid: int) -> int | None:
    return _stat_field(pid, 3)


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), None when there is none: with its pid, its identity."""
    return _stat_field(pid, 19)


def children_of(parent: int) -> list[int]:
    """The pids of the processes whose parent is `parent`."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _stat_field(int(p), 1) == parent]


def processes_of(uid: int) -> list[int]:
    """The pids of every process of user `uid` (read from /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def tree_memory(leader: int, uid: int | None, exact: bool = True) -> int:
    """Bytes used by the worker's processes (every process of the sandbox user `uid`; without one, the worker's
    session led by `leader`) and by that user's files in memory-backed temporary folders. exact=False: an upper
    bound, cheap to read (resident instead of proportional set sizes; shared pages counted once per process)."""
    pids = processes_of(uid) if uid is not None else \
        [int(p) for p in os.listdir("/proc") if p.isdigit() and _session_of(int(p)) == leader]
    total = sum((_proportional_bytes if exact else _resident_bytes)(pid) for pid in pids)
    if uid is not None:
        total += _walk([(folder, False) for folder in MEMORY_TEMP_DIRS], uid, every_folder=True)[0]
    return total


MAX_EPOCHS = 10_000


def progress_of(message) -> tuple[int, int, float] | None:
    """(epoch, epochs, loss) of a worker's progress message {"progress": {"epoch": e, "epochs": n, "loss": x}}
    (and optionally "tokens", see judged_tokens) with 1 <= e <= n <= MAX_EPOCHS, exact ints and a float; None for
    anything else (student code can send it)."""
    if not isinstance(message, dict) or set(message) != {"progress"}:
        return None
    body = message["progress"]
    if not isinstance(body, dict) or set(body) - {"tokens"} != {"epoch", "epochs", "loss"}:
        return None
    epoch, epochs, loss = body["epoch"], body["epochs"], body["loss"]
    if type(epoch) is not int or type(epochs) is not int or type(loss) is not float:
        return None
    return (epoch, epochs, loss) if 1 <= epoch <= epochs <= MAX_EPOCHS else None


MALFORMED = object()          # judged_tokens of a message whose captions are not plain token tensors
MAX_CAPTIONS = 100_000        # rows of one judged token tensor
MAX_CAPTION_LENGTH = 256      # its columns
MAX_CAPTION_SETS = 8          # tensors of a {name: tensor} judged at once


def _token_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return (torch is not None and type(value) is torch.Tensor and value.dtype == torch.long and value.dim() == 2
            and value.shape[0] <= MAX_CAPTIONS and value.shape[1] <= MAX_CAPTION_LENGTH)


def judged_tokens(message):
    """The captions a progress message carries for judging (a (N, T) long tensor, or {name: such tensor}); None when
    it carries none; MALFORMED for anything else. Their meaning (N, the vocabulary) is checked by the judge."""
    body = message.get("progress") if isinstance(message, dict) else None
    if not isinstance(body, dict) or "tokens" not in body:
        return None
    tokens = body["tokens"]
    if _token_tensor(tokens):
        return tokens
    if (type(tokens) is dict and 0 < len(tokens) <= MAX_CAPTION_SETS
            and all(type(k) is str and _token_tensor(v) for k, v in tokens.items())):
        return tokens
    return MALFORMED


class EvaluationFailed(Exception):
    """The grader's `evaluate` raised (its cause): a grader error, never the worker's."""


def _judge(evaluate: Evaluate | None, epoch: tuple[int, int, float], tokens) -> bool:
    """evaluate(epoch, epochs, tokens) is True; False without `evaluate`."""
    if evaluate is None:
        return False
    try:
        return evaluate(epoch[0], epoch[1], tokens) is True
    except Exception as exc:
        raise EvaluationFailed() from exc


def describe_exit(code: int | None, under_init: bool = False) -> str:
    """Why the worker ended, from the exit code of the process the grader started. `under_init`: that process is the
    worker's PID namespace (autograder/worker/init.py), which ends with the worker's exit status, or 128 + the
    signal that killed it, as a shell does (a worker that exits with such a status itself is reported the same)."""
    if code is None:
        return "the worker stopped answering"
    if under_init and 128 < code < 128 + signal.NSIG:
        code = 128 - code
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"the worker was killed by {name}" + (" (likely out of memory)" if name == "SIGKILL" else "")
    return f"the worker exited with status {code} (the student's code ended the process)"


def shown_exit(why: str) -> str:
    """describe_exit's text as a hidden check may show it: that the worker exited or was killed by a signal, not the
    status or the signal the student's code chose (SIGKILL stays named: the memory limit's, likely)."""
    if why.startswith("the worker exited with status "):
        return "the worker exited (the student's code ended the process)"
    if why.startswith("the worker was killed by ") and not why.startswith("the worker was killed by SIGKILL"):
        return "the worker was killed by a signal"
    return why


def copy_runtime(target: Path) -> Path:
    """Copy the worker's code (RUNTIME_FILES) into `target`, world-readable (root-owned when run as root)."""
    for pattern in RUNTIME_FILES:
        for source in sorted(ROOT.glob(pattern)):
            destination = target / source.relative_to(ROOT)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
            os.chmod(destination, 0o644)
    for folder in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        os.chmod(folder, 0o755)
    return target


