"""The first process of the worker's PID namespace, where the grader can make one (the grader's isolation):

    python -I -S -B RUNTIME/autograder/worker/init.py -- -s -P -B ... RUNTIME/autograder/worker/main.py ...

runs this same interpreter with the arguments after `--` (the worker's command line) as its only child.

Why the worker is not that process itself: the first process of a PID namespace ignores every signal it has no
handler for when the signal comes from inside the namespace, its own abort() included, so a worker there would not
crash the way its code did (an abort would end as a segmentation fault, a self-kill not at all). This process
starts the worker, reaps whatever else the namespace leaves to it (the orphans of the worker's
own processes), and when the worker ends it ends too: with the worker's exit status, or 128 + the number of the
signal that killed it, as a shell reports it (`client.replies.describe_exit` reads it so). Its end takes every process left
in the namespace with it: the kernel kills them.

It runs as the sandbox user, like the worker, so it first makes itself not dumpable: its files in /proc then belong
to root, and the worker cannot open its memory to take it over (it has no seccomp filter of its own). It holds none
of the worker's channel: once the worker dies, nothing keeps the grader's pipes open. Standard library only, no
site packages (`-S`): it starts in milliseconds.

The worker's interpreter is started as /proc/self/exe, this process's own program, with the interpreter's path as
its argv[0] (from which Python finds its virtual environment): the path may cross a folder the sandbox user cannot
search (setpriv started this process while it still held the grader's capabilities), but a running program can
always start its own file again.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_DUMPABLE = 4
NOT_STARTED = 127  # the worker's program could not be run (a shell's status for it)


def set_dumpable(dumpable: bool) -> None:
    """Not dumpable: this process's /proc files are root's, so no process of the same user can read or write its
    memory, trace it or take its descriptors (the zygote of autograder/worker/main.py uses it too)."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl(PR_SET_DUMPABLE, {int(dumpable)}) failed")


def exit_status(wait_status: int) -> int:
    """A shell's exit status for a child's wait status: its exit code, or 128 + the signal that killed it."""
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def run(arguments: list[str]) -> int:
    """Start this interpreter with `arguments` as this process's child, reap every child until it ends, and return
    its exit status."""
    worker = os.fork()
    if worker == 0:
        try:
            os.execv("/proc/self/exe", [sys.executable, *arguments])
        except OSError as exc:
            print(f"init: cannot start {sys.executable}: {exc}", file=sys.stderr, flush=True)
        os._exit(NOT_STARTED)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the channel's pipes are the worker's alone
    while True:
        pid, status = os.wait()
        if pid == worker:
            return exit_status(status)


def main(argv: list[str]) -> None:
    arguments = argv[1:] if argv[:1] == ["--"] else argv
    if not arguments:
        sys.exit("usage: init.py -- PYTHON_ARGUMENT ...")
    set_dumpable(False)
    # Python's one handler (SIGINT): without it this process ignores every signal sent from inside its namespace.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os._exit(run(arguments))


if __name__ == "__main__":
    main(sys.argv[1:])
