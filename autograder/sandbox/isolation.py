"""How a worker is isolated on this machine, decided once per grading run.

As root (Gradescope, CI) the worker runs as the dedicated unprivileged user `captionkit-sandbox`, in a
network namespace with only a loopback interface when the kernel allows it. Without root (a student's
laptop, a TA's account) it runs as the same user in a separate process with resource limits, which the
command line reports in one line. Either way the worker gets a fresh session, a scrubbed environment and
resource limits (set by the worker on itself before it imports student code, see worker.py).

After every part, `sweep` kills every process of the sandbox user (a `setsid` daemon escapes the
process-group kill) and deletes the files it left in the shared temporary folders.
"""
from __future__ import annotations

import fcntl
import functools
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SANDBOX_USER = "captionkit-sandbox"
# Graders running at once (a TA's batch with --jobs N) each take their own sandbox user, so that one
# grader's sweep never kills another's worker. A slot is held by an flock for the grader's lifetime.
SLOTS = 16
LOCK_DIR = Path("/run/lock/captionkit") if Path("/run/lock").is_dir() else Path("/tmp/captionkit-locks")
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
_held_slot = None
ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Isolation:
    mode: str                       # "user": a dedicated unprivileged user; "process": same user, own process
    uid: int | None = None
    gid: int | None = None
    network_namespace: bool = False
    prefix: tuple[str, ...] = field(default=())   # put before the worker's command line
    note: str = ""                  # one line for the person running the grader

    def owns(self, path: Path) -> None:
        """Give `path` to the sandbox user (a no-op without one)."""
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)


def _run_quietly(cmd: list[str], timeout: float = 60) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _ensure_user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    if shutil.which("useradd") and _run_quietly(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                                                 "--shell", "/usr/sbin/nologin", name]):
        return pwd.getpwnam(name)
    return None


def _claim_user() -> pwd.struct_passwd | None:
    """The first sandbox user no other grader on this machine holds (slot 0 is SANDBOX_USER itself)."""
    global _held_slot
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    os.chmod(LOCK_DIR, 0o700)
    for slot in range(SLOTS):
        handle = open(LOCK_DIR / f"slot-{slot}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        user = _ensure_user(SANDBOX_USER if slot == 0 else f"{SANDBOX_USER}-{slot}")
        if user is None:
            handle.close()
            return None
        _held_slot = handle  # kept open (and locked) until this process exits
        return user
    return None


def detect() -> Isolation:
    """The strongest isolation this machine allows (decided once per process: a forked child decides anew,
    so it never shares its parent's sandbox user)."""
    return _detect(os.getpid())


@functools.lru_cache(maxsize=4)
def _detect(pid: int) -> Isolation:
    """detect(), checked by actually starting Python that way."""
    probe = [sys.executable, "-I", "-c", "import torch"]
    net = ["unshare", "--net", "--ipc", "--"] if shutil.which("unshare") and \
        _run_quietly(["unshare", "--net", "--ipc", "--", "true"]) else []
    if os.geteuid() == 0:
        user = _claim_user()
        if user is None:
            return Isolation("process", note="isolation: separate process with limits (no free sandbox user "
                                             f"{SANDBOX_USER}[-N] could be claimed or created)")
        switch = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", "--"]
        if shutil.which("setpriv") and _run_quietly(net + switch + probe):
            protect_hidden()
            become_subreaper()
            where = "no network" if net else "network namespaces unavailable"
            return Isolation("user", user.pw_uid, user.pw_gid, bool(net), tuple(net + switch),
                             f"isolation: worker runs as {user.pw_name} ({where})")
        return Isolation("process", network_namespace=bool(net), prefix=tuple(net),
                         note=f"isolation: separate process with limits ({SANDBOX_USER} cannot run this Python: make "
                              "the interpreter and its packages readable by other users)")
    user_net = ["unshare", "--user", "--map-root-user", "--net", "--"]
    if shutil.which("unshare") and _run_quietly(user_net + probe):
        return Isolation("process", network_namespace=True, prefix=tuple(user_net),
                         note="isolation: separate process with limits, no network (not root: no user switch)")
    return Isolation("process", note="isolation: separate process with limits (not root: no user switch)")


# What the sandbox user must never read: reference solutions, checks (hidden properties), the hidden seed,
# the kit's tests (they hold edited references) and the repository's history.
HIDDEN_PATHS = ("solutions", "autograder/checks", "autograder/hidden", "tests", "instructor", ".git")


def protect_hidden(root: Path = ROOT) -> list[str]:
    """Make every hidden path under `root` readable by its owner only (root). Returns the paths changed."""
    changed = []
    for rel in HIDDEN_PATHS:
        path = root / rel
        if path.exists() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
            changed.append(rel)
    return changed


def become_subreaper() -> None:
    """Adopt orphaned descendants (a worker's setsid daemons), so their zombies can be reaped here."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _reap() -> None:
    """Collect exited children without blocking (killed daemons would otherwise stay as zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def sweep(isolation: Isolation) -> int:
    """Kill every process of the sandbox user and delete its files in the temporary folders.
    Returns how many processes were killed. A no-op without a dedicated user."""
    if isolation.uid is None:
        return 0
    _reap()
    killed = 0
    for _ in range(20):  # a fork bomb may respawn between scans
        pids = _processes_of(isolation.uid)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(0.05)
        _reap()
    for tmp in TEMP_DIRS:
        try:
            entries = list(os.scandir(tmp))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != isolation.uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
    return killed


# The code a worker needs, and nothing else: no checks, no references, no hidden seed.
RUNTIME_FILES = ("autograder/__init__.py", "autograder/fixtures.py", "autograder/recipes/*.py",
                 "autograder/sandbox/*.py", "shared/*.py")


def build_runtime(target: Path) -> Path:
    """Copy the worker's code into `target` (world-readable, root-owned when run as root)."""
    for pattern in RUNTIME_FILES:
        for source in sorted(ROOT.glob(pattern)):
            destination = target / source.relative_to(ROOT)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
            os.chmod(destination, 0o644)
    for folder in [target, *[p for p in target.rglob("*") if p.is_dir()]]:
        os.chmod(folder, 0o755)
    return target
