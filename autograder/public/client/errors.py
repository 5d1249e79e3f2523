"""Why a call into the worker did not return a result: the student's code raised, the worker overran a limit or
ended, or the grader's own judgement failed."""

from __future__ import annotations


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


class WorkerDied(Exception):
    """The worker exited, was killed, or overran its time limit. The message is one line; `shown` is what a hidden
    check may show of it: nothing the student's code chose (an import error's message, an exit status, a signal, how
    much memory), since the workers of hidden checks hold the references of earlier parts (serve_hidden)."""

    def __init__(self, reason: str, shown: str | None = None):
        super().__init__(reason)
        self.shown = reason if shown is None else shown


class TimedOut(WorkerDied):
    """The call's own `timeout` ended it (not the check's or the part's deadline): the worker was killed."""


class EvaluationFailed(Exception):
    """The grader's `evaluate` raised (its cause): a grader error, never the worker's."""
