"""A worker process serving one part: its start from the zygote, its end, a restart, and the two phases of a part
(its call loop: calls.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

from autograder.public import limits as time_limits  # (`limits` is a Worker argument)
from autograder.public.client.calls import CallLoop
from autograder.public.client.disk import empty_folder, remove_tree
from autograder.public.client.errors import OverMemory, StudentError, WorkerDied, ZygoteLost
from autograder.public.client.interface import SEPARATE_PROCESS, Isolation, Limits
from autograder.public.client.processes import children_of, start_time
from autograder.public.client.replies import describe_exit, error_fields
from autograder.public.client.zygote import (
    FORK_SECONDS,
    KILL_SECONDS,
    SharedZygote,
    ZygoteAttribute,
    ZygoteState,
    start_zygote,
    worker_environment,
)
from autograder.public.limits import Deadline, earliest
from autograder.public.source_reach import grader_reach
from autograder.public.source_scan import banned_uses
from autograder.public.staging import stage
from autograder.worker import protocol, recipes
from autograder.worker.message_errors import ChannelClosed, ChannelTimeout, MessageTooLarge
from autograder.worker.reply_budget import REPLY


class Worker(CallLoop):
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

    proc = ZygoteAttribute("proc")  # the zygote's process, as started (start_zygote)
    control = ZygoteAttribute("control")  # the zygote's control socket
    stdout = ZygoteAttribute("stdout")  # the file its output (and every worker's) goes to
    zygote = ZygoteAttribute("chain")  # see _find_zygote

    def __init__(
        self,
        module: str,
        submission: Path,
        scratch: Path,
        runtime: Path,
        isolation: Isolation,
        references: dict[str, str] | None = None,
        limits: Limits | None = None,
        deadline: Deadline | None = None,
        shared: SharedZygote | None = None,
    ):
        if shared is not None and (isolation != SEPARATE_PROCESS or module not in shared.modules):
            raise ValueError(
                f"shared: a zygote shared by parts serves them without a sandbox (SEPARATE_PROCESS) "
                f"and must have been started for {module!r}"
            )
        self.module = module
        self.scratch = Path(scratch)
        self.shared = shared is not None
        self.state = shared if shared is not None else ZygoteState(self.scratch, (module,))
        self.runtime, self.isolation = Path(runtime), isolation
        self.references = references or {}
        self.hidden_phase = False  # the running worker serves the hidden checks (and so holds the references)
        self.limits = limits or Limits()
        self.deadline = deadline
        self.on_progress = None  # set by the engine: on_progress(epoch, epochs, loss) after each training epoch
        self.child: int | None = None  # the running worker's pid, as the zygote sees it
        self.child_started: int | None = None  # its start time (outside a PID namespace)
        self.became = False  # the running worker is the zygote itself
        self.starts = 0  # workers started for the part
        self.sent = 0  # requests sent: each reply must name the last one (call)
        self.work = self.requests = self.replies = None
        self.writable: list[str] | None = None  # where the sandbox user's files may lie (writable_folders), found once
        self.disk_since = 0  # when the running worker started, in file-time ns (_start)
        self.dead_reason: str | None = None
        self.dead_shown: str | None = None  # the reason as a hidden check may show it (WorkerDied.shown)
        self.import_error: StudentError | None = None
        self.over_budget: tuple[str, str] | None = None  # why a reply broke its budget: the part's grade ends
        self.scratch.mkdir(parents=True, exist_ok=True)
        os.chmod(self.scratch, 0o711)
        self.staging = stage(module, Path(submission), self.scratch / "staging")
        # The staged module is the grader's alone (0700): its text goes to the worker through the start message, so
        # no other process, of this sandbox user or another, can open it by its path.
        os.chmod(self.staging, 0o700)
        self.source = (self.staging / f"{module}.py").read_bytes().decode("utf-8", errors="replace")
        # Every op some recipe of this part bans, and where the module's source names it (or the ban's machinery).
        forbidden_ops = tuple(
            sorted(
                {op for name, fn in recipes.load(module).items() if name.startswith(f"{module}.") for op in fn.forbid}
            )
        )
        self.banned = banned_uses(self.source, forbidden_ops)
        self.reach = grader_reach(self.source)  # reaches into the grader's worker: no result counts
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
        empty_folder(work)  # kept, not made anew: a zygote's namespace may hold its private tmpfs mounted there
        os.chmod(work, 0o700)
        self.isolation.owns(work)
        self.work = work
        # The worker's files in the shared folders are those changed from now on (older ones are another worker's).
        self.disk_since = os.stat(work).st_ctime_ns
        config = time_limits.LIMITS
        deadline = earliest(
            Deadline.after(config.seconds(config.startup), "the worker did not start in time"), self.deadline
        )
        try:
            requests, replies = self._fork(deadline)
            startup = max(deadline.left(), 1.0)
            references = self.references if self.hidden_phase else {}
            protocol.send(requests, {"references": references, "source": self.source}, timeout=startup)
            hello = protocol.receive(replies, timeout=startup, watch=self._watch_memory, budget=REPLY)
        except ChannelTimeout:
            self.kill(deadline.reached)
            return
        except (ChannelClosed, MessageTooLarge, OSError, ZygoteLost) as exc:
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
        error = (
            error_fields(hello.get("error"), self.module, self.source)
            if isinstance(hello, dict) and set(hello) == {"ready", "error"} and hello["ready"] is False
            else None
        )
        if error is None:
            self.kill("the worker sent a malformed start-up message")
            return
        self.import_error = StudentError(*error)
        self.kill(
            f"{self.module}.py could not be imported: {self.import_error}",
            shown=f"{self.module}.py could not be imported",
        )  # not even the kind where it is hidden (A58)

    def _fork(self, deadline: Deadline) -> tuple[int, int]:
        """A worker forked from the zygote, connected to this grader by two new pipes (returned: requests, replies);
        a fresh zygote first when there is none or the one there was is gone (a zygote that stops answering is ended
        by the request that waited for it: _control)."""
        fresh = not self._zygote_running()
        if fresh:
            self._end_zygote()
            self._start_zygote()
        timeout = deadline.left() if fresh else min(deadline.left(), FORK_SECONDS)
        # The workers of the public checks and of the grader's rounds of them are forked (runner.run_part_checks); the
        # hidden checks' are a zygote itself (the running one, else a fresh one): a zygote beside a worker costs memory
        # (the pages the worker writes are copied), so it never sits beside the part's largest workers, the hidden
        # checks' training ones.
        become, self.starts = self.hidden_phase and not self.shared, self.starts + 1
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            answer = self._control(
                {"become" if become else "fork": str(self.work), "module": self.module}, timeout, fds=(req_r, rep_w)
            )
        except BaseException:
            for fd in (req_w, rep_r):
                os.close(fd)
            raise
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.requests, self.replies = requests, replies = protocol.nonblocking(req_w), rep_r
        if type(answer.get("pid")) is not int:
            raise ZygoteLost("the zygote did not fork")
        self.child, self.became = answer["pid"], become
        self.child_started = start_time(self.child) if not self.isolation.pid_namespace else None
        if self.zygote is None:  # found at its first fork: no student code has run yet
            self.zygote = self._find_zygote()
        return requests, replies

    def _start_zygote(self) -> None:
        start_zygote(self.state, self.runtime, self.isolation, self.limits, worker_environment(self.scratch / "work"))

    def _control(self, request: dict, timeout: float, fds: tuple[int, ...] = ()) -> dict:
        """Send the zygote one request and return its answer; ZygoteLost when it has none, ChannelTimeout when it
        has none within `timeout` seconds."""
        if self.control is None:
            raise ZygoteLost("no zygote")
        self.control.settimeout(max(timeout, 0.01))
        try:
            socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            answer = self.control.recv(4096)
        except TimeoutError:  # a late answer must never be read as the next request's: this zygote is done
            self.control.close()
            self.control = None
            raise ChannelTimeout("the zygote did not answer in time") from None
        except OSError as exc:
            raise ZygoteLost(f"the zygote is gone ({type(exc).__name__})") from None
        try:
            answer = json.loads(answer) if answer else None
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise ZygoteLost("the zygote is gone")
        return answer

    def _find_zygote(self) -> tuple[tuple[int, int | None], ...]:
        """(pid, start time) of the zygote and, in a PID namespace, of its init: the sandbox user's processes a
        sweep between two workers of the part leaves running."""
        chain = [self.proc.pid]
        if self.isolation.pid_namespace:  # unshare (root) -> init -> zygote
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
        except (ZygoteLost, ChannelTimeout):
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
        if self.became:  # the zygote itself: its status is the started process's (through init in a PID namespace)
            try:
                code = self.proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                code = None
            return describe_exit(code, self.isolation.pid_namespace)
        try:
            status = self._control({"wait": self.child, "seconds": seconds}, seconds + KILL_SECONDS).get("status")
        except (ZygoteLost, ChannelTimeout):
            return "the worker ended with the zygote it was forked from (killed by the student's code or for memory)"
        return describe_exit(os.waitstatus_to_exitcode(status) if type(status) is int else None)

    def close(self) -> None:
        if self.dead_reason is None:
            self.dead_reason = "closed"
        if self.shared:  # its own worker only: the zygote serves the parts after it
            self.kill(self.dead_reason)
        else:
            self._end_zygote()
        if self.work is not None:
            remove_tree(self.work)

    def restart(self) -> None:
        """A fresh worker for the same part (after a crash or a timeout in one check, or before its hidden checks)."""
        self.kill("restarted")
        if self.over_budget is not None:  # no fresh worker for the rest of the part: each check fails as this one did
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
