"""What a worker is to the code that grades with it: its resource limits, how it is kept apart (Isolation), and
the StudentWorker protocol the runner and the engine call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from autograder.public import limits as time_limits  # (`limits` is a Worker argument)
from autograder.public.client.errors import StudentError
from autograder.public.limits import Deadline

TREE_MEMORY_BYTES = 6 * 1024**3  # the default of Limits.tree_memory_bytes


@dataclass
class Limits:
    """Resource limits of a worker, set by the worker on itself before it imports student code (its time limits:
    autograder.public.limits)."""

    memory_bytes: int = 3 * 1024**3  # address space: torch needs about 1 GiB to import
    file_bytes: int = 16 * 1024**2  # the largest file it may write (its output file included)
    processes: int = 64  # per user: enforced for the sandbox user, not for root
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

    @property
    def uid(self) -> int | None:
        """The sandbox user, whose processes are the worker's (None: no dedicated user)."""

    @property
    def gid(self) -> int | None:
        """The sandbox user's group, the only one that may read the staged module."""

    @property
    def prefix(self) -> tuple[str, ...]:
        """Put before the worker's command line (namespaces, the user switch)."""

    @property
    def pid_namespace(self) -> bool:
        """The prefix makes a PID namespace: the worker runs under autograder/worker/init.py."""

    @property
    def private_tmp(self) -> bool:
        """The prefix mounts a private /dev/shm (and /var/tmp) in the worker's namespace."""

    @property
    def entry(self) -> dict | None:
        """The prefix's sandbox as a process forked by the grading process's template enters it itself
        (autograder/worker/sandbox_entry.py, client.template); None: the zygote is started behind the prefix."""

    @property
    def note(self) -> str:
        """One line for the person running the checks."""

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
    entry: None = None  # a student's `check` starts one zygote for every part (SharedZygote): no template
    note: str = "isolation: separate process with limits"

    def owns(self, path: Path) -> None:
        pass

    def sweep(self, keep: frozenset[int] = frozenset()) -> int:
        return 0


SEPARATE_PROCESS = SeparateProcess()


class StudentWorker(Protocol):
    """What the engine needs of a worker serving one part: the sandboxed process below, or the in-process
    stand-in of the kit's benchmarks."""

    import_error: StudentError | None  # the student's module could not be imported (then nothing runs)
    dead_reason: str | None  # why the worker stopped, once it has
    deadline: Deadline | None  # the part's: no start-up and no call of this worker goes past it
    on_progress: Callable[[int, int, float], None] | None  # told (epoch, epochs, loss) after each training epoch

    @property
    def alive(self) -> bool: ...

    def call(
        self,
        recipe: str,
        timeout: float | None = None,
        deadline: Deadline | None = None,
        evaluate: Evaluate | None = None,
        **kwargs,
    ):
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


# evaluate(epoch, epochs, tokens) -> True to stop a training run: the grader's judgement of the captions a training
# recipe sent after an epoch (autograder.grader.training); tokens is a (N, T) long tensor or {name: such tensor}.
Evaluate = Callable[[int, int, object], bool]

# (part, submission folder, scratch folder, {earlier part: reference source}, the part's deadline) -> a worker
WorkerFactory = Callable[[str, Path, Path, "dict[str, str]", "Deadline | None"], StudentWorker]
