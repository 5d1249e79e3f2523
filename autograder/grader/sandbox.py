"""The grader's isolation of its workers as decided for this machine (Sandbox, made by autograder.grader.isolation),
and the sweep after every worker: `sweep` kills every process of the sandbox user (a `setsid` daemon escapes the
process-group kill) and deletes the files it left in the shared temporary folders, world-writable folders beneath
them included.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.public.client import remove_tree
from autograder.public.client.disk import TEMP_DIRS, writable_folders
from autograder.public.client.processes import processes_of


@dataclass(frozen=True)
class Sandbox:
    """The grader's isolation of its workers on this machine (implements autograder.public.client.Isolation)."""

    mode: str  # "user": a dedicated unprivileged user; "process": same user, own process
    uid: int | None = None
    gid: int | None = None
    network_namespace: bool = False
    prefix: tuple[str, ...] = field(default=())  # put before the worker's command line
    note: str = ""  # one line for the person running the grader
    private_tmp: bool = False  # /dev/shm and /var/tmp are small private tmpfs mounts in the worker's namespace
    pid_namespace: bool = False  # the worker runs in a PID namespace of its own, under autograder/worker/init.py
    # Zygotes are forked from the grading process's template (client.template), which needs the sandbox user to run
    # this very Python (a zygote forked for it imports later modules from this Python's folders); else each is
    # started behind the prefix.
    template: bool = True

    @property
    def entry(self) -> dict | None:
        """The prefix as the template's forked zygotes enter it themselves (entry_of); None without a template."""
        return entry_of(self.prefix) if self.template else None

    def owns(self, path: Path) -> None:
        """Give `path` to the sandbox user (a no-op without one)."""
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)

    def sweep(self, keep: frozenset[int] = frozenset()) -> int:
        """Kill every process of the sandbox user but those in `keep` and delete its temporary files (the module's
        `sweep`)."""
        return sweep(self, keep)


UNSHARE_NAMESPACES = {"--net": "net", "--ipc": "ipc", "--mount": "mount", "--pid": "pid", "--user": "user"}
# unshare options that come with those namespaces and need nothing more of an entry: a PID namespace's first process
# is forked and dies with the process outside (sandbox_entry does both), /proc is mounted for it, the user namespace
# maps this process's user to its root.
UNSHARE_IMPLIED = {"--fork", "--kill-child", "--mount-proc", "--map-root-user"}
SETPRIV_DROP = {"--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"}


def entry_of(prefix: tuple[str, ...]) -> dict:
    """The sandbox entry (autograder/worker/sandbox_entry.py) that does what `prefix` does: the prefixes
    autograder.grader.isolation makes, `unshare ... --`, then `sh -c SCRIPT sh`, then `setpriv ... --`. ValueError for
    anything else: a prefix this cannot read is never entered some other way."""
    entry: dict = {"namespaces": [], "private_tmp": None, "uid": None, "gid": None, "drop_capabilities": False}
    words = list(prefix)

    def options(program: str) -> list[str]:
        if "--" not in words:
            raise ValueError(f"{program} without `--` in the prefix {prefix}")
        end = words.index("--")
        found, words[: end + 1] = words[:end], []
        return found

    while words:
        program = words.pop(0)
        if program == "unshare" and not entry["namespaces"]:
            found = options(program)
            unknown = [w for w in found if w not in UNSHARE_NAMESPACES and w not in UNSHARE_IMPLIED]
            pid_options = {"--fork", "--kill-child", "--mount-proc"} <= set(found)
            if unknown or ("--pid" in found) != pid_options:
                raise ValueError(f"unshare options the template cannot enter: {found}")
            if ("--user" in found) != ("--map-root-user" in found):
                raise ValueError(f"a user namespace is entered with --map-root-user only: {found}")
            entry["namespaces"] = [UNSHARE_NAMESPACES[w] for w in found if w in UNSHARE_NAMESPACES]
        elif program == "sh" and words[:1] == ["-c"] and len(words) >= 3 and words[2] == "sh":
            entry["private_tmp"], words[:3] = words[1], []
        elif program == "setpriv" and not entry["drop_capabilities"]:
            found = options(program)
            switch = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in found if w.startswith(("--reuid=", "--regid="))}
            rest = set(found) - {f"{k}={v}" for k, v in switch.items()}
            if rest - {"--clear-groups"} != SETPRIV_DROP or bool(switch) != ("--clear-groups" in rest):
                raise ValueError(f"setpriv options the template cannot enter: {found}")
            if switch:
                if set(switch) != {"--reuid", "--regid"}:
                    raise ValueError(f"setpriv switches both user and group or neither: {found}")
                entry["uid"], entry["gid"] = int(switch["--reuid"]), int(switch["--regid"])
            entry["drop_capabilities"] = True
        else:
            raise ValueError(f"a prefix the template cannot enter: {prefix}")
    return entry


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


def _kill_all_as(uid: int, gid: int) -> None:
    """kill(-1, SIGKILL) as user `uid`: every process of that user at once. The kernel signals them all while no
    process can fork, so a chain of processes that keeps forking and leaving (a new pid each time) is ended too; a scan
    of /proc and a kill per pid can miss it, a sweep after sweep (docs/security.md, the template's review)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def sweep(isolation: Sandbox, keep: frozenset[int] = frozenset()) -> int:
    """Kill every process of the sandbox user but those in `keep` (a part's zygote and its init, between two workers
    of the part) and delete its files and folders in the temporary folders and in every world-writable folder beneath
    them (client.disk.writable_folders). Returns how many processes were killed. A no-op
    without a dedicated user."""
    if isolation.uid is None:
        return 0
    _reap()
    if not keep and isolation.gid is not None:
        _kill_all_as(isolation.uid, isolation.gid)
    killed = 0
    for _ in range(20):  # a fork bomb may respawn between scans
        pids = [pid for pid in processes_of(isolation.uid) if pid not in keep]
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
    # Every folder the user may have written in: the temporary folders and every world-writable folder beneath them
    # that it could reach (/tmp/.X11-unix): a file left there would meet a later worker of the same user, as a name
    # to read or as a file counted against its disk limit.
    for tmp in (*writable_folders(isolation.uid, TEMP_DIRS), *queue_folders()):
        try:
            entries = list(os.scandir(tmp))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == isolation.uid:
                    remove_tree(entry.path)  # however deep the user nested it (client.remove_tree)
            except OSError:
                pass
    return killed


def queue_folders() -> list[str]:
    """Where a message-queue file system is mounted (Docker mounts one at /dev/mqueue): each POSIX message queue is a
    file there, owned by its maker, which unlink removes. Without one the sweep cannot list queues; the worker's
    seccomp filter refuses mq_open, and in an IPC namespace of its own its queues end with it."""
    try:
        with open("/proc/self/mounts") as mounts:
            return [
                fields[1] for fields in (line.split() for line in mounts) if len(fields) > 2 and fields[2] == "mqueue"
            ]
    except OSError:
        return []
