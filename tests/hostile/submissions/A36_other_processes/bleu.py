# hostile: appended to solutions/bleu.py
# A36: look at the machine's other processes from the worker: which ones /proc lists, what of theirs can be read
# (command line, environment, memory, open files, working folder) and whether they take a signal. The findings go
# to a file in DROP (a folder the sandbox user may write to): they are longer than a check's feedback.
import json as _json
import os as _os
import sys as _sys

# @@RUNTIME_NAMES@@

_reference_ngram_counts = ngram_counts
DROP = "@@DROP@@"
PRIVATE = ("environ", "mem", "maps", "fd", "cwd", "root")


def _read(path) -> str:
    try:
        if path.endswith("/fd"):
            # The numbers of the open files are not the files: the folder of a process that is not dumpable belongs
            # to the root of its user namespace (without root, the worker's own user); what the worker must not
            # reach is where each descriptor leads.
            for fd in _os.listdir(path):
                _os.readlink(f"{path}/{fd}")
        elif _os.path.isdir(path) and not _os.path.islink(path):
            _os.listdir(path)
        elif _os.path.islink(path):
            _os.readlink(path)
        elif path.endswith("/mem"):
            open(path, "rb").close()      # the kernel checks access when the file is opened
        else:
            # Opened and read: a process that is ending (its memory already released, not yet a zombie) opens its
            # maps to anyone, with nothing in them; only what holds something was reached.
            with open(path, "rb") as f:
                if not f.read(1):
                    return "nothing"
        return "read"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _signal(pid) -> str:
    try:
        _os.kill(pid, 0)                  # signal 0: the permission check without a signal
        return "allowed"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _without_memory(pid) -> bool:
    """Whether `pid` has no memory of a program behind its files: a kernel thread (PF_KTHREAD in its flags) or a
    process that has ended (a zombie, or one being reaped). Such a process's maps open, with nothing in them."""
    with open(f"/proc/{pid}/stat") as f:
        state, *fields = f.read().rsplit(")", 1)[1].split()
    return state in ("Z", "X") or bool(int(fields[5]) & 0x00200000)


def _probe() -> dict:
    me, found = _os.getpid(), {}
    try:
        listed = sorted((p for p in _os.listdir("/proc") if p.isdigit()), key=int)
    except OSError as exc:   # Landlock, where /proc lists the machine's processes: only the worker's own files
        return {"self": me, "ppid": _os.getppid(), "uid": _os.getuid(), "others": {}, "listing": type(exc).__name__}
    for entry in listed:
        pid = int(entry)
        if pid == me:
            continue
        try:
            uid = _os.stat(f"/proc/{pid}").st_uid
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read(2000).replace(b"\0", b" ").decode(errors="replace")
            reach = {**{name: _read(f"/proc/{pid}/{name}") for name in PRIVATE}, "signal": _signal(pid)}
            empty = _without_memory(pid)      # after the reads: a process that ended meanwhile counts as ended
        except OSError:
            continue                          # gone
        found[pid] = {"uid": uid, "cmdline": cmdline, "empty": empty, "reach": reach}
    return {"self": me, "ppid": _os.getppid(), "uid": _os.getuid(), "others": found, "listing": "read"}


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):  # the grader's own call
        found = _probe()
        with open(_os.path.join(DROP, "processes.json"), "w") as f:
            _json.dump(found, f)
        raise RuntimeError("PROBE" + _json.dumps({"processes": len(found["others"])}))
    return _reference_ngram_counts(tokens, n)
