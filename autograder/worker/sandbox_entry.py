"""How a process forked by the template (autograder/worker/template.py) enters a worker's sandbox itself: the same
steps, in the same order, as the command-line prefix a grader would otherwise put before the zygote's interpreter
(autograder.grader.isolation: `unshare`, the private-tmp shell script, `setpriv`, autograder/worker/init.py), made
with system calls in the forked process, so that it keeps the template's `import torch`.

An entry is plain data, made by the grader from its isolation's prefix (autograder.grader.sandbox.entry_of):

    {"namespaces": ["net", "ipc", "mount", "pid"],   unshare's namespaces ("user": with --map-root-user)
     "private_tmp": "SCRIPT" or None,                   the shell script run as root in the new mount namespace
     "uid": N or None, "gid": N or None,                setpriv --reuid/--regid --clear-groups
     "drop_capabilities": bool}                         setpriv --no-new-privs --inh-caps=-all --bounding-set=-all

`enter` returns in the process that is to become the zygote. With a PID namespace two more processes stay behind,
as they do under the prefix: the process forked by the template (unshare's part: it waits for the namespace's first
process and ends with its status) and that first process (init.py's part: it reaps, ends with the zygote's status,
and takes the namespace with it).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

from autograder.worker.init import exit_status, set_dumpable

NAMESPACE_FLAGS = {"mount": 0x00020000, "user": 0x10000000, "pid": 0x20000000, "net": 0x40000000, "ipc": 0x08000000}
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 0x40000
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, PR_SET_PDEATHSIG = 24, 38, 47, 4, 1
CAPABILITY_VERSION_3 = 0x20080522
KEYS = {"namespaces", "private_tmp", "uid", "gid", "drop_capabilities"}

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int) -> None:
    encode = lambda text: None if text is None else text.encode()  # noqa: E731
    _check(_libc.mount(encode(source), encode(target), encode(kind), ctypes.c_ulong(flags), None), f"mount {target}")


def _unshare(namespaces: list[str]) -> None:
    """unshare(1)'s namespaces; a user namespace maps this process's user and group to its root (--map-root-user)."""
    flags = 0
    for name in namespaces:
        flags |= NAMESPACE_FLAGS[name]
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(flags), f"unshare {' '.join(namespaces)}")
    if "user" in namespaces:
        # A process that is not dumpable (the template's forks are not) has its /proc files owned by root, so a user
        # who is not root could not write its own maps: dumpable for those three writes only.
        set_dumpable(True)
        try:
            for path, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
                with open(f"/proc/self/{path}", "w") as f:
                    f.write(text)
        finally:
            set_dumpable(False)
    if "mount" in namespaces:  # unshare(1)'s default propagation: nothing mounted here reaches the machine
        _mount("none", "/", None, MS_REC | MS_PRIVATE)


def _mount_proc() -> None:
    """unshare --mount-proc, in the PID namespace's first process: /proc lists this namespace's processes."""
    _mount("none", "/proc", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV)


class _CapabilityHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapabilityData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _set_capabilities(keep_permitted: bool) -> None:
    """No inheritable capability; with `keep_permitted` False no effective or permitted one either."""
    header = _CapabilityHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapabilityData * 2)()
    _check(_libc.capget(ctypes.byref(header), data), "capget")
    for word in data:
        word.inheritable = 0
        if not keep_permitted:
            word.effective = word.permitted = 0
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _drop_capabilities(uid: int | None, gid: int | None) -> None:
    """setpriv [--reuid=UID --regid=GID --clear-groups] --no-new-privs --inh-caps=-all --bounding-set=-all: an empty
    bounding set (no program regains a capability), none inheritable or ambient, then the user switch, which empties
    the rest, or (no switch) an explicit drop of every capability, which the program setpriv starts gets by exec."""
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    _set_capabilities(keep_permitted=True)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    for capability in range(last + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), f"drop capability {capability}")
    if uid is not None and gid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    _set_capabilities(keep_permitted=False)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _wait_and_end(child: int, relay_signal: bool) -> None:
    """Wait for `child` (reaping whatever else ends meanwhile) and end with its status: init.py's end (a shell's
    status: 128 + the signal that killed it), or, `relay_signal`, unshare's (a child killed by a signal kills this
    process with it). Never returns."""
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            break
    if relay_signal and os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(exit_status(status))


def enter(entry: dict, folder: str) -> None:
    """Enter the sandbox `entry` describes (its namespaces, its private tmp mounted from `folder`, the user switch or
    the capability drop), as the prefix would; returns in the process that becomes the zygote."""
    if set(entry) != KEYS:
        raise ValueError(f"a sandbox entry has the keys {sorted(KEYS)}, not {sorted(entry)}")
    namespaces = list(entry["namespaces"])
    if namespaces:
        _unshare(namespaces)
    if "pid" in namespaces:
        first = os.fork()  # the namespace's first process; this one stays outside and ends with it (unshare --fork)
        if first != 0:
            os.closerange(0, os.sysconf("SC_OPEN_MAX"))  # nothing of the worker's channel or output
            set_dumpable(False)
            _wait_and_end(first, relay_signal=True)
        _mount_proc()
    if entry["private_tmp"] is not None:
        done = subprocess.run(
            ["sh", "-c", entry["private_tmp"], "sh", "true"],
            cwd=folder,
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode != 0:
            raise OSError(f"the private temporary folders could not be mounted (status {done.returncode})")
    if entry["drop_capabilities"]:
        _drop_capabilities(entry["uid"], entry["gid"])
    if "pid" in namespaces:  # init.py's part: not dumpable, it reaps the namespace and ends with the zygote
        set_dumpable(False)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the process outside (--kill-child)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        zygote = os.fork()
        if zygote != 0:
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # the channel is the zygote's alone
            _wait_and_end(zygote, relay_signal=False)
    sys.stdout.flush()
