"""The template: one interpreter per grading process that imports what every zygote imports (the worker's modules,
torch, the parts' recipes) once, runs no student code ever, and forks every zygote of every grade that process runs
(autograder/worker/main.py; a grade starts eleven, `batch` eleven per submission), each fork entering the worker's
sandbox itself (autograder/worker/sandbox_entry.py) before it does what a zygote started by the grader does.

    python -s -P -B --check-hash-based-pycs always -X faulthandler RUNTIME/autograder/worker/template.py --control FD

It is started by the grading process (autograder.public.client.template) from a runtime copy of its own, with a
worker's scrubbed environment, and is not dumpable: no process of its user can read or write its memory or take its
descriptors. It serves the grading process's control socket, one request at a time:

- `{"start": [ARGUMENT, ...], "folder": PATH, "environment": {...}, "entry": {...}}` with two descriptors (the new
  zygote's control socket, its output file): preloads the parts the arguments name (`--module`), then forks; the
  child takes a session of its own, keeps only those two descriptors (as 3, and 1 and 2), enters the folder, the
  environment and the sandbox `entry` (sandbox_entry.enter), and runs the zygote's main with the arguments and
  `--control 3`. Answers `{"pid": PID}`.
- `{"wait": PID, "seconds": S}`: the wait status of a zygote it forked, once it has ended within S seconds (null:
  not yet). Answers `{"status": STATUS or null}`.

Every answer repeats the request's "seq".

Nothing of a grade reaches it but these requests: a folder name, limits, part names and an environment.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from autograder.worker import main as zygote_main
from autograder.worker import sandbox_entry
from autograder.worker.init import NOT_STARTED, set_dumpable

CONTROL = 3  # the zygote's control socket, as its --control
MAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "main.py")


def _modules(arguments: list[str]) -> list[str]:
    return [arguments[i + 1] for i, argument in enumerate(arguments[:-1]) if argument == "--module"]


def become_zygote(request: dict, channel: int, output: int) -> None:
    """In the forked child: keep only `channel` (as CONTROL) and `output` (as 1 and 2), enter the sandbox and run the
    zygote. Never returns."""
    try:
        os.setsid()
        channel, output = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 64) for fd in (channel, output))
        null = os.open("/dev/null", os.O_RDONLY)
        for fd, target in ((null, 0), (output, 1), (output, 2), (channel, CONTROL)):
            os.dup2(fd, target)
        os.closerange(CONTROL + 1, os.sysconf("SC_OPEN_MAX"))  # the template's own socket above all
        os.chdir(request["folder"])
        os.environ.clear()
        os.environ.update(request["environment"])
        sandbox_entry.enter(request["entry"], request["folder"])
        sys.argv = [MAIN, *request["start"], "--control", str(CONTROL)]
        sys.modules["__main__"] = zygote_main  # as in a zygote started as main.py: the worker's module is __main__
        zygote_main.main(sys.argv[1:])
    except BaseException as exc:  # noqa: BLE001 (the zygote did not start: say why where the grader reads it)
        try:
            os.write(2, f"template: the zygote did not start: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(NOT_STARTED)
    os._exit(0)


# The zygotes forked so far and the statuses collected: module-level, so that a fork empties them before anything
# else runs in it (a zygote learns nothing of the others).
CHILDREN: set[int] = set()
STATUSES: dict[int, int] = {}


def serve(control: socket.socket) -> None:
    """Answer the grading process's requests (the module's docstring) until it closes the socket."""
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 16, 2)
        if not data:
            return
        request = json.loads(data)
        if "start" in request and len(fds) == 2:
            reply: dict = {"pid": fork_zygote(request, fds)}
        elif request.get("wait") in CHILDREN:
            pid = request["wait"]
            reply = {"status": zygote_main.wait_for(pid, STATUSES, request.get("seconds"))}
            if reply["status"] is not None:
                CHILDREN.discard(pid)
                STATUSES.pop(pid, None)
        else:
            for fd in fds:
                os.close(fd)
            reply = {"status": None} if "wait" in request else {"pid": None}
        reply["seq"] = request.get("seq")  # the request's number: an answer is read only by the request it is for
        control.send(json.dumps(reply).encode())
        data = request = reply = None  # type: ignore[assignment]  # nothing of one request stays for the next fork


def fork_zygote(request: dict, fds: list[int]) -> int:
    """Preload the parts the request names, fork, and return the child's pid (the child becomes the zygote)."""
    for pid in list(CHILDREN):  # collect the zygotes that ended (a killed grading process never asks for theirs)
        zygote_main.wait_for(pid, STATUSES, 0)
    for pid in list(STATUSES)[:-256]:  # kept for a while, in case their grading process asks
        STATUSES.pop(pid)
        CHILDREN.discard(pid)
    zygote_main.preload(_modules(request["start"]))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        CHILDREN.clear()
        STATUSES.clear()
        become_zygote(request, *fds)
    for fd in fds:
        os.close(fd)
    CHILDREN.add(pid)
    return pid


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--control", type=int, required=True)
    args = parser.parse_args(argv)
    set_dumpable(False)
    zygote_main.preload([])  # the worker's own modules: torch comes with the first part that needs it
    try:
        serve(socket.socket(fileno=args.control))
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
