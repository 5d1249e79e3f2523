"""A worker's calls: one recipe run with its arguments, within its time limits, its replies checked, its memory
and files watched while the grader waits. The half of Worker (worker.py) that serves calls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autograder.public import limits as time_limits  # (`limits` is a Worker argument)
from autograder.public.client.disk import disk_usage, writable_folders
from autograder.public.client.errors import EvaluationFailed, OverDisk, OverMemory, StudentError, TimedOut, WorkerDied
from autograder.public.client.interface import Evaluate, Isolation, Limits
from autograder.public.client.processes import tree_memory
from autograder.public.client.replies import (
    MALFORMED,
    error_fields,
    is_plain,
    judge,
    judged_tokens,
    progress_of,
    shown_exit,
)
from autograder.public.client.zygote import ZygoteState
from autograder.public.limits import Deadline, earliest
from autograder.worker import protocol, recipes
from autograder.worker.forbidden import READABLE
from autograder.worker.message_errors import ChannelClosed, ChannelTimeout
from autograder.worker.reply_budget import REPLY, OverBudget


class CallLoop:
    """Worker's calls. The attributes and the lifecycle they use are Worker's (worker.py), declared here."""

    module: str
    source: str
    isolation: Isolation
    limits: Limits
    deadline: Deadline | None
    state: ZygoteState
    work: Path | None
    writable: list[str] | None
    disk_since: int
    reach: str | None
    banned: dict[str, str]
    sent: int
    requests: int | None
    replies: int | None
    on_progress: Callable[[int, int, float], None] | None
    over_budget: tuple[str, str] | None

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def kill(self, reason: str, shown: str | None = None) -> None:
        raise NotImplementedError

    def _death(self, kind: type[WorkerDied] = WorkerDied) -> WorkerDied:
        raise NotImplementedError

    def _why_ended(self, seconds: float = 10) -> str:
        raise NotImplementedError

    def call(
        self,
        recipe: str,
        timeout: float | None = None,
        deadline: Deadline | None = None,
        evaluate: Evaluate | None = None,
        **kwargs,
    ):
        """Run `recipe` on the student's module with `kwargs`; return its (plain-data) result.

        A training recipe may send, after an epoch, the captions its model gives the hidden test grids; the
        grader answers `evaluate(epoch, epochs, tokens)` (False without `evaluate`): True stops the training run.
        Each epoch is judged at most once and in order, so a worker learns at most one bit per epoch.

        The call ends by the earliest of its own `timeout` seconds (default LIMITS.call, x LIMITS.scale), `deadline`
        (the check's, passed by autograder.public.runner) and the part's. Raises StudentError when the student's
        code raised, WorkerDied when the worker is gone or one of those was reached (it is then killed): TimedOut
        when it was the call's own `timeout`."""
        requests, replies = self.requests, self.replies
        if not self.alive or requests is None or replies is None:
            raise self._death()
        config = time_limits.LIMITS
        seconds = config.seconds(config.call if timeout is None else timeout)
        own = Deadline.after(seconds, f"timed out after {seconds:.0f} s")
        deadline = earliest(own, deadline, self.deadline)
        ended = TimedOut if deadline is own else WorkerDied
        if deadline.passed:
            self.kill(deadline.reached)
            raise self._death(ended) from None
        try:
            self.sent += 1
            protocol.send(requests, {"recipe": recipe, "kwargs": kwargs, "seq": self.sent}, timeout=deadline.left())
            reply = protocol.receive(replies, timeout=max(deadline.left(), 0.0), watch=self._watch_memory, budget=REPLY)
            judged = 0  # the last epoch whose captions were judged
            while type(reply) is dict and "progress" in reply:  # a training epoch ended: show it, read on
                epoch, tokens = progress_of(reply), judged_tokens(reply)
                if epoch is None or tokens is MALFORMED or (tokens is not None and epoch[0] <= judged):
                    self.kill("sent a malformed progress message")
                    raise self._death()
                if self.on_progress is not None:
                    self.on_progress(*epoch)
                if tokens is not None:
                    judged = epoch[0]
                    stop = judge(evaluate, epoch, tokens)
                    protocol.send(requests, {"stop": stop}, timeout=max(deadline.left(), 0.0))
                reply = protocol.receive(
                    replies, timeout=max(deadline.left(), 0.0), watch=self._watch_memory, budget=REPLY
                )
            # Once more at the reply, in the worker's own folder (its TMPDIR): files written faster than the watch's
            # period (a page cache takes a gigabyte in well under WATCH_EVERY) would otherwise pass a call unseen.
            # The shared temporary folders are counted by the watch alone: Landlock gives the worker no right there.
            self._watch_disk(own_folder_only=True)
        except ChannelTimeout:
            self.kill(deadline.reached)
            raise self._death(ended) from None
        except EvaluationFailed as exc:  # the grader's own error: reported as such, not as the worker's
            self.kill("the grader could not judge a training epoch")
            raise (exc.__cause__ or exc) from None
        except OverMemory as exc:
            self.kill(str(exc), shown=exc.shown)
            raise self._death() from None
        except (ChannelClosed, BrokenPipeError):
            why = self._why_ended()
            self.kill(why, shown=shown_exit(why))
            raise self._death() from None
        except OverBudget as exc:  # the grader's own sentence: no text of the worker's
            self.over_budget = (
                f"sent a reply over the grader's budget: {exc}",
                "sent a reply over the grader's budget",
            )
            self.kill(*self.over_budget)
            raise self._death() from None
        except Exception as exc:  # noqa: BLE001 (an unreadable or oversized reply)
            self.kill(f"sent an unreadable reply ({type(exc).__name__})", shown="sent an unreadable reply")
            raise self._death() from None
        # The reply names the request it answers: one written on the pipe by the student's code (which shares the
        # worker's process) before the recipe's own puts every later reply a request late, and is refused here.
        if isinstance(reply, dict) and set(reply) == {"error", "seq"} and reply["seq"] == self.sent:
            error = error_fields(reply["error"], self.module, self.source)
            if error is not None:
                raise StudentError(*error)
        elif (
            isinstance(reply, dict)
            and set(reply) == {"ok", "seq"}
            and reply["seq"] == self.sent
            and is_plain(reply["ok"])
        ):
            self._refuse_banned(recipe)
            return reply["ok"]
        self.kill("sent a malformed reply")
        raise self._death()

    def _watch_memory(self) -> None:
        """Raise OverDisk when the worker's files take more than their limit, OverMemory when its processes and its
        user's files in memory use more than theirs."""
        if self.state.proc is None:
            return
        self._watch_disk()
        limit = self.limits.tree_memory_bytes
        # Resident memory bounds the proportional set size from above and costs microseconds a process to read,
        # where smaps_rollup walks a torch process's page tables (about 15 ms): the exact sum only near the limit.
        if tree_memory(self.state.proc.pid, self.isolation.uid, exact=False) <= limit:
            return
        used = tree_memory(self.state.proc.pid, self.isolation.uid)
        if used > limit:
            raise OverMemory(
                f"the worker's processes used {used / 2**30:.1f} GiB of memory together "
                f"(the limit is {self.limits.tree_memory_bytes / 2**30:.1f} GiB)"
            )

    def _watch_disk(self, own_folder_only: bool = False) -> None:
        """Raise OverDisk when the worker's files take more than their limit; `own_folder_only`: counting only those
        in its own folder (microseconds, where the machine's shared temporary folders can take milliseconds)."""
        if self.state.proc is None or self.work is None:
            return
        if self.writable is None:
            self.writable = writable_folders(self.isolation.uid) if self.isolation.uid is not None else []
        used, files = disk_usage(
            self.isolation.uid, self.work, [] if own_folder_only else self.writable, self.disk_since
        )
        if used > self.limits.disk_bytes or files > self.limits.disk_files:
            raise OverDisk(
                f"the worker's files took more than its disk limit ({self.limits.disk_bytes / 2**20:.0f}"
                f" MiB or {self.limits.disk_files} files): {used / 2**20:.0f} MiB in {files} files"
            )

    def _refuse_banned(self, recipe: str) -> None:
        """The grader's own half of the ban (autograder.public.source_scan): a recipe that bans an op earns nothing
        from a module whose source names it, whatever the worker's half let through. No recipe of any part earns
        anything from a module that reaches into the grader's worker, which could make a recipe judge itself."""
        if self.reach is not None:
            raise StudentError(
                "ForbiddenOpError",
                f"your module's source uses the grader's worker ({self.reach}): "
                "a module that reaches into it could make a check judge itself, so no check of this "
                "part earns credit",
            )
        for op in getattr(recipes.RECIPES.get(recipe), "forbid", ()):
            if op in self.banned:
                raise StudentError(
                    "ForbiddenOpError",
                    f"your module's source uses {READABLE[op]} or the grader's "
                    f"ban of it ({self.banned[op]}); this check compares against it, so it earns no "
                    "credit here",
                )
