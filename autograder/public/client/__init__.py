"""The grading process's side of the sandbox: start a worker for one part, call recipes in it with a time limit, and
kill it (its whole process group) when it overruns or misbehaves. Student code never runs in this process; what comes
back is plain data, checked by the caller.

    worker.py      a worker process serving one part: started from a zygote, ended, restarted (Worker)
    calls.py       its call loop: a recipe run within its time limits, the reply checked, memory and files watched
    zygote.py      the zygote the workers are forked from; the one a student's `check` shares between parts
    interface.py   resource limits, isolation, and the StudentWorker protocol the runner calls
    errors.py      why a call returned no result
    replies.py     what the grader makes of a reply, a traceback, a training epoch's message, an exit status
    processes.py   a worker's processes and memory, from /proc
    disk.py        a worker's files: counted, emptied, removed
    runtime.py     the copy of the worker's code a worker runs from

What the rest of the kit uses is imported here under its own name.
"""

from autograder.public.client.disk import remove_tree
from autograder.public.client.errors import (
    EvaluationFailed,
    FolderTooDeep,
    OverDisk,
    OverMemory,
    StudentError,
    TimedOut,
    WorkerDied,
    ZygoteLost,
)
from autograder.public.client.interface import (
    SEPARATE_PROCESS,
    Evaluate,
    Isolation,
    Limits,
    SeparateProcess,
    StudentWorker,
    WorkerFactory,
)
from autograder.public.client.runtime import RUNTIME_FILES, copy_runtime
from autograder.public.client.worker import Worker
from autograder.public.client.zygote import SharedZygote

__all__ = [
    "RUNTIME_FILES",
    "SEPARATE_PROCESS",
    "EvaluationFailed",
    "Evaluate",
    "FolderTooDeep",
    "Isolation",
    "Limits",
    "OverDisk",
    "OverMemory",
    "SeparateProcess",
    "SharedZygote",
    "StudentError",
    "StudentWorker",
    "TimedOut",
    "Worker",
    "WorkerDied",
    "WorkerFactory",
    "ZygoteLost",
    "copy_runtime",
    "remove_tree",
]
