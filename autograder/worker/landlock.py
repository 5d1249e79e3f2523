"""Landlock (a Linux security module since 5.13, usable without privileges): the worker restricts itself to reading
what it needs, and to writing where it may keep files, before it imports student code. Every other file of the
machine, another checkout of the kit among them, is then out of its reach whatever its permissions say. Inherited by
every child; no process can lift it.

Three system calls through ctypes (no binding is needed); where the kernel lacks Landlock (or it is switched off) the
worker goes on under file permissions alone, and says so (`restrict`'s answer, the worker's first line of output).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

# System call numbers: the same on every architecture (new calls share one table since Linux 5.x).
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
# Access rights to files, by the first ABI version that knows them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
RIGHTS_OF_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
SCOPE_ABSTRACT_UNIX_SOCKET = 1  # ABI 6: no connection to an abstract socket made outside the domain
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may hold

READ = EXECUTE | READ_FILE | READ_DIR
EVERYTHING = (1 << 16) - 1

SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/sys", "/dev")
# A worker without a PID namespace of its own sees in /proc what describes the machine, which libraries read (torch's
# CPU detection), and its own process's files; no other process's: another submission's worker, graded at the same
# time, would show what it does in them (its memory size, its threads) to a worker that polls them (A63).
MACHINE_PROC = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys", "/proc/filesystems", "/proc/mounts")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")  # written by ordinary programs
# The shared temporary folders get no right at all: a file left in a world-writable folder there (/tmp/.X11-unix)
# would outlive the worker, for a later worker to find by name. The worker's own folder is its HOME and TMPDIR.
SHARED_TEMP = ("/tmp", "/var/tmp", "/run/lock")
# POSIX shared memory: made and read back by the same program. A right there only where /dev/shm is a private tmpfs of
# the worker's mount namespace: elsewhere it is the machine's, and a file left there could reach a worker of another
# submission graded at the same time (the kit's security notes, A61).
MEMORY_TEMP = ("/dev/shm",)
# A folder the worker may also write in, named by the grader's environment (passed on by client.Worker): where the
# kit's own tests let an attack leave evidence after grading. Unset when grading.
DROP_VARIABLE = "CAPTIONKIT_WORKER_DROP"


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (too old, not built in, or switched off)."""
    try:
        version = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def worker_paths(
    runtime: str,
    folder: str,
    own_shm: bool = False,
    proc: tuple[str, ...] = ("/proc",),
    inputs: str | None = None,
) -> dict[str, int]:
    """{path: rights} of a worker running from `runtime` whose own folder (its part's scratch, holding its current
    folder) is `folder`: the system's programs and libraries, this Python and its packages, the runtime and the grading
    folder `inputs` (the inputs it is told of; by default the folder above the runtime: a zygote forked from the
    template runs from the template's copy), read; its folder, everything, and /dev/shm too where it is the
    worker's own (`own_shm`); the paths of /proc in `proc` (own_process_proc: the worker's own where /proc lists other
    processes); the shared temporary folders (SHARED_TEMP), nothing beyond what a rule above gives beneath them."""
    rights = {path: READ for path in (*SYSTEM, *proc)}
    python = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        *(p for p in sys.path if os.path.isabs(p)),
    }
    rights.update({os.path.realpath(path): READ for path in python})
    rights.update({runtime: READ, inputs or os.path.dirname(runtime): READ})
    rights.update({path: EVERYTHING for path in ((*MEMORY_TEMP, folder) if own_shm else (folder,))})
    drop = os.environ.get(DROP_VARIABLE, "")
    if os.path.isabs(drop):  # set by the grader's own environment, never by a submission
        rights[drop] = EVERYTHING
    rights.update({path: READ_FILE | WRITE_FILE | TRUNCATE for path in DEVICES})
    return rights


def own_process_proc() -> tuple[str, ...]:
    """The paths of /proc a worker may read where /proc lists the machine's processes: MACHINE_PROC and its own
    process's folder (so /proc/self reads as usual)."""
    return (*MACHINE_PROC, f"/proc/{os.getpid()}")


def restrict(rights: dict[str, int]) -> str:
    """Restrict this process (and its future children) to `rights` ({path: access rights}; paths that do not exist
    are skipped). Returns "" when the restriction holds, else why not (one line). Needs no_new_privs set first."""
    version = abi()
    if version == 0:
        return "no Landlock in this kernel: reads limited by file permissions only"
    handled = RIGHTS_OF_ABI.get(version, RIGHTS_OF_ABI[5])
    libc = _libc()
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET if version >= 6 else 0
    attr = struct.pack("=QQQ", handled, 0, scoped)
    ruleset = libc.syscall(CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"no Landlock ruleset ({os.strerror(ctypes.get_errno())})"
    try:
        for path, allowed in rights.items():
            problem = _add_rule(libc, ruleset, path, allowed & handled)
            if problem:
                return problem
        if libc.syscall(RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return f"Landlock restriction refused ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return ""


def _add_rule(libc, ruleset: int, path: str, allowed: int) -> str:
    """Allow `allowed` beneath `path` (on the file itself, for a file); "" when done or when `path` is missing."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return ""
    try:
        if not os.path.isdir(path):
            allowed &= FILE_RIGHTS
        beneath = struct.pack("=Qi", allowed, fd)
        if (
            libc.syscall(ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), beneath, ctypes.c_uint32(0))
            != 0
        ):
            return f"Landlock rule for {path} refused ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(fd)
    return ""
