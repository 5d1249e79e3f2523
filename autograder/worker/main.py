"""The worker: the only process that imports student code, and the zygote each worker of a part is forked from.

Started by autograder.public.client from a copy of the code it needs (client.copy_runtime), one process per
part in a grade (a student's `check` starts one for all its parts: client.SharedZygote): the zygote. Before any student code exists it limits its own resources (an unprivileged process cannot raise
them back), installs its seccomp filter, makes itself not dumpable (its /proc files are then root's: no process of
its user can read or write its memory or take its descriptors) and imports the part's recipes and torch (not for a
part whose messages are plain data: preload), once.
Then it serves the grader's control socket: a request `{"fork": WORK, "module": PART}` carries two pipe descriptors
and starts a worker of PART (one of its --module parts), a forked child that keeps only those two pipes, becomes dumpable again, enters WORK and serves; until then the
zygote runs no student code and never holds a reference's source. `{"become": WORK}`, with two pipes too, makes the
zygote itself the next worker (the grader asks it for a part's second worker, the hidden checks': so no zygote sits
beside the largest workers, the training ones, and a part imports torch once for two workers). `{"kill": PID}` kills
a forked worker (its process group) and `{"wait": PID, "seconds": S}` waits for one to end; both answer with its wait
status.

A worker, in order: installs the reference modules of earlier parts that the grader sent it in its first message
(in memory: the files stay unreadable; only a worker of the hidden checks gets any, client.Worker.serve_hidden),
caps its printed output, imports the student's module and answers requests
`{"recipe": name, "kwargs": {...}, "seq": n}` with `{"ok": result, "seq": n}` or `{"error": {...}, "seq": n}` until the
channel closes; a
training recipe sends `{"progress": {"epoch": e, "epochs": n, "loss": x}}` after each epoch before its answer, with
"tokens" (the captions of the epoch's model) in a training check, which the grader answers with `{"stop": bool}`.
Requests and replies are plain data (autograder.worker.protocol).

    python -s -P -B ... RUNTIME/autograder/worker/main.py --module decoding [--module bleu ...] --control FD --memory BYTES ... [--own-shm] [--own-pids] [--inputs FOLDER]

The student's module arrives as text in the first message (the staged file is readable by the grader only); it
is compiled under the name SUBMISSION/<module>.py, a path that exists nowhere, and its lines are given to
linecache so that tracebacks show them.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import io
import json
import linecache
import os
import resource
import signal
import socket
import sys
import time
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SUBMISSION = "/submission"  # the folder the student's module is said to come from (tracebacks name its file only)
PRINT_CAP = 64 * 1024  # bytes of student output kept per stream; the rest is counted and dropped


class CappedStream(io.TextIOBase):
    """A text stream that passes the first PRINT_CAP bytes to `target` and drops the rest."""

    def __init__(self, target):
        self.target, self.written, self.dropped = target, 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        data = str(text)
        room = max(PRINT_CAP - self.written, 0)
        if room:
            try:
                self.target.write(data[:room])
                self.target.flush()
            except OSError:  # the output file is at its size limit (an earlier worker of the part may have filled it)
                pass
        self.written += min(len(data), room)
        self.dropped += max(len(data) - room, 0)
        return len(data)


def limit_resources(memory: int, cpu: int, file_size: int, processes: int) -> None:
    """Soft and hard limits at once, so the student's code cannot raise them."""
    for name, value in (
        ("RLIMIT_AS", memory),
        ("RLIMIT_CPU", cpu),
        ("RLIMIT_FSIZE", file_size),
        ("RLIMIT_NPROC", processes),
        ("RLIMIT_CORE", 0),
        ("RLIMIT_NOFILE", 256),
    ):
        try:
            resource.setrlimit(getattr(resource, name), (value, value))
        except (ValueError, OSError):  # already lower, or not settable here
            pass


def install_references(sources: dict[str, str]) -> dict[str, types.ModuleType]:
    """Modules `solutions.<part>` built from source text held in memory (registered in sys.modules under that
    name, where their classes look their module up); returns them by part."""
    package = types.ModuleType("solutions")
    package.__path__ = []
    sys.modules["solutions"] = package
    modules = {}
    for name, text in sources.items():
        module = types.ModuleType(f"solutions.{name}")
        sys.modules[module.__name__] = module
        exec(compile(text, f"<reference {name}>", "exec"), module.__dict__)
        setattr(package, name, module)
        modules[name] = module
    return modules


def _student_frames(exc: BaseException, path: str) -> str:
    """The traceback lines that lie in the student's module, compiled under `path`: where their code failed,
    nothing of ours. Only that exact name counts (code compiled under another name, even one in the same folder, is
    not the module); the grader reads no more of these lines than the file name and the line number, and writes the
    rest from its own copy of the module (client.replies.student_frames)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    for f in frames:
        f.filename = os.path.basename(f.filename)
    return "".join(traceback.format_list(frames[-3:]))


def _kind(exc: BaseException) -> str:
    """The exception's type as the grader reports it: the nearest built-in class in its ancestry (or the
    grader's own ForbiddenOpError). Any other class name, even one claiming a trusted module, is text the
    student's code may have chosen."""
    import builtins

    from autograder.worker.forbidden import ForbiddenOpError

    for cls in type(exc).__mro__:
        if cls is ForbiddenOpError or getattr(builtins, cls.__name__, None) is cls:
            return cls.__name__
    return "BaseException"


def _error(exc: BaseException, path: str) -> dict:
    """The error message for `exc`, raised by the student's module compiled under `path`."""
    from autograder.worker.protocol import clean

    message = str(exc) if not isinstance(exc, RecursionError) else "maximum recursion depth exceeded"
    return {"type": _kind(exc), "message": clean(message, 800), "where": clean(_student_frames(exc, path), 1500)}


def sanitize(obj, depth: int = 0):
    """Plain data only: tensors (detached, on the CPU, strided, of a dtype a message carries), numbers, strings, None,
    lists, tuples, dicts.
    Anything else becomes {"__unsupported__": type name}, which the grader reports as a wrong type."""
    torch = sys.modules.get("torch")  # no tensor exists before something imports torch

    if depth > 20:
        return {"__unsupported__": "a structure nested too deeply"}
    if obj is None or type(obj) in (bool, int, float, str):
        return obj
    # Subclasses (numpy.float64, a class that lies in __float__) cross as their true base value.
    if isinstance(obj, bool):
        return bool(int.__int__(obj))
    if isinstance(obj, int):
        return int.__int__(obj)
    if isinstance(obj, float):
        return float.__float__(obj)
    if isinstance(obj, str):
        return str.__str__(obj)
    if torch is not None and isinstance(obj, torch.Tensor):
        from autograder.worker.message_codec import unsendable

        tensor = obj.detach().cpu().clone()
        why = unsendable(tensor)  # a sparse or quantized tensor: the check reports a wrong type
        return tensor if why is None else {"__unsupported__": why}
    if isinstance(obj, (list, tuple)):
        items = [sanitize(x, depth + 1) for x in obj]
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, dict) and all(isinstance(k, (str, int, tuple)) for k in obj):
        return {k: sanitize(v, depth + 1) for k, v in obj.items()}
    return {"__unsupported__": type(obj).__name__}


def module_path(module: str) -> str:
    """The name the student's module `module` is compiled under (a path that exists nowhere)."""
    return os.path.join(SUBMISSION, f"{module}.py")


def import_student(module: str, source: str):
    """Run the student's `source` as the module `module` (registered first, so `import <module>` inside it and
    dataclasses resolve to it)."""
    path = module_path(module)
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)  # no mtime: never evicted
    spec = importlib.util.spec_from_loader(module, loader=None, origin=path)
    assert spec is not None  # a loader of None always gives a spec
    mod = importlib.util.module_from_spec(spec)
    mod.__file__ = path
    sys.modules[module] = mod
    exec(compile(source, path, "exec", dont_inherit=True), mod.__dict__)
    return mod


def report_epoch(requests: int, replies: int, epoch: int, epochs: int, loss: float, tokens=None) -> bool:
    """Send one progress message; with `tokens` (the captions of the epoch's model for the hidden test grids), wait
    for the grader's answer {"stop": bool} and return it: True once the grader has seen them reach the threshold."""
    from autograder.worker import protocol

    body = {"epoch": int(epoch), "epochs": int(epochs), "loss": float(loss)}
    if tokens is None:
        protocol.send(replies, {"progress": body})
        return False
    protocol.send(replies, {"progress": {**body, "tokens": sanitize(tokens)}})
    answer = protocol.receive(requests)
    return type(answer) is dict and answer.get("stop") is True


def serve(module: str, requests: int, replies: int) -> None:
    from autograder.worker import protocol
    from autograder.worker.forbidden import ForbiddenOpError, bound_references, forbid, originals
    from autograder.worker.memory import release_memory
    from autograder.worker.message_errors import ChannelClosed
    from shared.seeding import seed_everything

    start = protocol.receive(requests)
    references = install_references(start["references"])  # the source text is not kept
    source, start = start["source"], None
    from autograder.worker import recipes

    recipes.REFERENCES.update(references)
    registry = recipes.load(module)
    sys.stdout, sys.stderr = CappedStream(sys.stdout), CappedStream(sys.stderr)
    # The reference ops as torch defines them, taken before the student's module can touch them; only a part that
    # forbids one needs them (resolving them imports torch).
    known = originals() if any(fn.forbid for fn in registry.values()) else {}
    try:
        student = import_student(module, source)
    except BaseException as exc:  # noqa: BLE001 (a syntax error, an exception at import, even SystemExit)
        protocol.send(replies, {"ready": False, "error": _error(exc, module_path(module))})
        return
    bound = bound_references(student, known)
    protocol.send(replies, {"ready": True})
    recipes._report_progress = lambda epoch, epochs, loss, tokens=None: report_epoch(
        requests, replies, epoch, epochs, loss, tokens
    )
    path = module_path(module)
    while True:
        try:
            request = protocol.receive(requests)
        except ChannelClosed:
            return
        fn = registry.get(request.get("recipe"))
        seq = request.get("seq")  # echoed: a reply written by anything else than this loop is one the grader refuses
        if fn is None:
            protocol.send(
                replies,
                {"error": {"type": "UnknownRecipe", "message": str(request.get("recipe")), "where": ""}, "seq": seq},
            )
            continue
        started = time.perf_counter()
        try:
            seed_everything(0)  # every call starts from the same state of Python's, NumPy's and torch's generators
            held = [op for op in fn.forbid if op in bound]
            if held:
                raise ForbiddenOpError(
                    f"your module holds the reference this check compares against "
                    f"({bound[held[0]]}); it earns no credit here"
                )
            with forbid(*fn.forbid):
                result = fn(student, **request.get("kwargs", {}))
            reply = {"ok": sanitize(result)}
        except BaseException as exc:  # noqa: BLE001 (student code may raise anything, SystemExit included)
            reply = {"error": _error(exc, path)}
        reply["seq"] = seq
        protocol.send(replies, reply)
        if time.perf_counter() - started > 0.25:  # a long call (training) leaves a large heap; a short one costs
            request = reply = result = None  # type: ignore[assignment]  # less than a collection would
            release_memory()


def preload(modules: list[str]) -> None:
    """Import what every worker of the parts `modules` imports before student code runs, once, in the zygote: the
    worker's own modules, torch (set up as every worker uses it) and the parts' recipes. Parts whose recipes take and
    return plain data (recipes.WITHOUT_TORCH: BLEU) skip torch, about 2 CPU s and 150 MB a part; a student's module may
    still import torch itself, and then runs it as every worker does: one thread (OMP_NUM_THREADS, set by the grader's
    client for every worker), its generator seeded before each call (shared.seeding)."""
    from autograder.worker import forbidden, memory, protocol, recipes  # noqa: F401
    from shared import seeding  # noqa: F401 (every call seeds Python's, NumPy's and torch's generators)

    if any(module not in recipes.WITHOUT_TORCH for module in modules):
        import torch

        from autograder.worker.lazy_dynamo import defer_dynamo_import
        from shared import training  # noqa: F401

        defer_dynamo_import()  # the optimizers' import of torch._dynamo, 2.5 CPU s in every training worker
        torch.set_num_threads(1)  # before any fork: a forked child must not inherit a thread pool
    for module in modules:
        recipes.load(module)
    # What is imported now lives as long as the zygote: out of the collector's reach, so that no collection in a worker
    # writes to (and so copies) the pages it shares with the zygote.
    gc.collect()
    gc.freeze()


REQUESTS, REPLIES = 3, 4  # a worker's two pipes: the grader's requests, its replies
# How the zygote was confined (main's --own-shm and --own-pids), for the layer each worker adds (become_worker).
CONFINEMENT: dict = {"own_shm": False, "own_pids": False, "inputs": None}


def narrow_proc() -> None:
    """Where /proc lists the machine's processes (no PID namespace of the worker's own), a Landlock layer of this
    worker's that lets it read no process's files in /proc but its own. Ends the worker if Landlock, present, refuses."""
    if CONFINEMENT["own_pids"]:
        return
    from autograder.worker import landlock
    from autograder.worker.confine import landlock as restrict

    problem = restrict(CONFINEMENT["own_shm"], landlock.own_process_proc(), CONFINEMENT["inputs"])
    if problem and landlock.abi() > 0:
        print(f"worker: {problem}", file=sys.stderr, flush=True)
        os._exit(1)


def become_worker(
    module: str, control: socket.socket, requests: int, replies: int, work: str, own_group: bool = True
) -> None:
    """Turn a child just forked by the zygote (or, `own_group` False, the zygote itself) into a worker: keep only its
    two pipes, as REQUESTS and REPLIES (never the control socket or a later worker's channel), take a process group
    of its own (the grader kills a forked worker by its group), become dumpable again (the zygote is not; a worker's
    /proc files are its user's, as they always were), enter `work` and serve. Never returns."""
    try:
        control.close()
        requests, replies = os.dup(requests), os.dup(replies)  # above 4, so that the two moves below cannot collide
        os.dup2(requests, REQUESTS)
        os.dup2(replies, REPLIES)
        os.closerange(REPLIES + 1, os.sysconf("SC_OPEN_MAX"))
        if own_group:
            os.setpgid(0, 0)
        from autograder.worker.init import set_dumpable

        set_dumpable(True)
        narrow_proc()  # before chdir: its rules name the part's folder, the zygote's current one
        os.chdir(work)
        # Its home and temporary folder: its own (a zygote that serves several parts was started with another's).
        os.environ["HOME"] = os.environ["TMPDIR"] = work
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None  # type: ignore[attr-defined]  # read from TMPDIR again
        serve(module, REQUESTS, REPLIES)
    finally:
        os._exit(0)  # skip atexit handlers and threads the student's code may have left behind


def wait_for(pid: int, statuses: dict[int, int], seconds: float | None) -> int | None:
    """The wait status of the zygote's child `pid` once it has ended (within `seconds`; None: as long as it takes),
    else None. Statuses already collected are kept in `statuses`."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while pid not in statuses:
        try:
            done, status = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        except ChildProcessError:
            return None
        if done == pid:
            statuses[pid] = status
        elif deadline is not None and time.monotonic() >= deadline:
            return None
        else:
            time.sleep(0.01)
    return statuses[pid]


def zygote(modules: list[str], control: socket.socket) -> None:
    """Serve the grader's control requests (see the module's docstring) until it closes the socket."""
    statuses: dict[int, int] = {}
    children: set[int] = set()
    while True:
        data, fds, _, _ = socket.recv_fds(control, 4096, 2)
        if not data:
            return
        request = json.loads(data)
        module = request.get("module", modules[0])
        if ("fork" in request or "become" in request) and module not in modules:  # not preloaded: no worker
            for fd in fds:
                os.close(fd)
            answer: dict[str, int | None] = {"pid": None}
        elif "fork" in request:
            for pid in list(children):  # collect the workers that ended by themselves
                wait_for(pid, statuses, 0)
            pid = os.fork()
            if pid == 0:
                become_worker(module, control, fds[0], fds[1], request["fork"])
            for fd in fds:
                os.close(fd)
            children.add(pid)
            answer = {"pid": pid}
        elif "become" in request:  # the zygote's last worker is the zygote itself: no second process beside it
            control.send(json.dumps({"pid": os.getpid()}).encode())
            become_worker(module, control, fds[0], fds[1], request["become"], own_group=False)
        else:
            pid = request.get("kill", request.get("wait"))
            if pid not in children:
                answer = {"status": None}
            else:
                if "kill" in request:
                    for kill in (os.killpg, os.kill):  # its group, and the worker itself if it left the group
                        try:
                            kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                answer = {"status": wait_for(pid, statuses, request.get("seconds"))}
        control.send(json.dumps(answer).encode())


def main(argv: list[str] | None = None) -> None:
    """The zygote: started by the grader with the module's command line, or forked by the template
    (autograder/worker/template.py), which passes the same arguments as `argv`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", action="append", required=True, help="a part the zygote serves (repeatable)")
    parser.add_argument("--control", type=int, required=True)
    parser.add_argument("--memory", type=int, required=True)
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--file-size", type=int, required=True)
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--own-shm", action="store_true", help="/dev/shm is a private tmpfs of this namespace")
    parser.add_argument("--own-pids", action="store_true", help="/proc lists this PID namespace's processes only")
    parser.add_argument("--inputs", help="the grading folder the workers read (default: the one above the runtime)")
    args = parser.parse_args(argv)
    limit_resources(args.memory, args.cpu, args.file_size, args.processes)
    from autograder.worker.confine import confine
    from autograder.worker.init import set_dumpable

    CONFINEMENT.update(own_shm=args.own_shm, own_pids=args.own_pids, inputs=args.inputs)
    problem = confine(args.own_shm, args.inputs)
    if problem:
        print(f"worker: {problem}", file=sys.stderr, flush=True)
    try:
        set_dumpable(False)
        preload(args.module)
        zygote(args.module, socket.socket(fileno=args.control))
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
