"""What the worker does to itself before it imports student code, beyond resource limits: no_new_privs (no
setuid program gains anything, a seccomp filter may be installed unprivileged) and a seccomp filter refusing the
system calls a student's code has no use for: Internet and raw sockets, ptrace and process memory access, new
namespaces (a user namespace would make it root inside one), mounts, kernel keyrings, sockets of every family
(its channel to the grader is a pair of pipes and a socket pair it inherits, so it never makes one: an AF_UNIX socket
could reach a listening process outside the sandbox, by a world-writable file or an abstract name), and System V and
POSIX message queues, semaphores and shared memory segments; then Landlock (autograder/worker/landlock.py): it reads
only the system's programs, this Python and its packages, its runtime and grading folder, and writes only its own
folder and the temporary ones.

Unprivileged and inherited by every child, so it holds where namespaces are refused (a Docker container without
CAP_SYS_ADMIN, as on Gradescope) and for a grader run without root. The filter needs libseccomp and its ctypes
binding pyseccomp (Linux); without them the worker says so on its first line of output and runs without it.
"""

from __future__ import annotations

import ctypes
import errno
import os

PR_SET_NO_NEW_PRIVS = 38
# Namespace flags of clone(2) and unshare(2).
NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
REFUSED = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
    "open_by_handle_at",
    "fsopen",
    "fsmount",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "fanotify_init",
    "io_uring_setup",
    # System V IPC objects and POSIX message queues outlive their process and, without an IPC namespace, the
    # part (a System V object can be removed only by its owner or CAP_SYS_ADMIN): none may be made. POSIX
    # shared memory (files in /dev/shm) is swept.
    "shmget",
    "msgget",
    "semget",
    "mq_open",
    # Sockets of every family: Internet and raw ones would reach the network, AF_UNIX ones a process outside
    # the sandbox listening on a world-writable file or an abstract name (no network namespace needed).
    # socketpair stays: its two ends are the process's own.
    "socket",
)


def available() -> bool:
    """Whether this machine can install the filter (Linux, libseccomp and pyseccomp present)."""
    try:
        import pyseccomp  # noqa: F401

        return True
    except (ImportError, OSError):
        return False


def no_new_privs() -> bool:
    """Set no_new_privs on this process and its future children; True when it is set."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def seccomp_filter() -> str:
    """Install the filter; return "" on success, else why not (one line)."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # not Linux, or libseccomp missing
        return f"no seccomp filter ({type(exc).__name__}: {exc})"
    try:
        refuse = seccomp.ERRNO(errno.EPERM)
        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in REFUSED:
            try:
                rules.add_rule(refuse, name)
            except (RuntimeError, ValueError, OSError):  # a call this kernel or libseccomp does not know
                continue
        for flag in NAMESPACE_FLAGS:
            rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        # clone3 passes its flags in memory, which a filter cannot read: "not implemented" makes the C library
        # fall back to clone, whose flags the rules above see.
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        rules.load()
    except Exception as exc:  # noqa: BLE001 (the worker reports it and goes on with the other limits)
        return f"no seccomp filter ({type(exc).__name__}: {exc})"
    return ""


def landlock(own_shm: bool = False, proc: tuple[str, ...] = ("/proc",), inputs: str | None = None) -> str:
    """Restrict this process's reads and writes (landlock.worker_paths) for a worker running from the runtime this file
    lies in, whose current folder is its part's (`own_shm`: /dev/shm is a private tmpfs of its namespace; `proc`: what
    of /proc it may read); "" when the restriction holds, else why not. A second call narrows the first (Landlock's
    layers): the zygote's allows all of /proc, a worker forked from it narrows that to its own process where /proc
    lists the machine's (own_process_proc). `inputs`: the grading folder (landlock.worker_paths)."""
    from autograder.worker import landlock

    runtime = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return landlock.restrict(landlock.worker_paths(runtime, os.getcwd(), own_shm, proc, inputs))


def confine(own_shm: bool = False, inputs: str | None = None) -> str:
    """no_new_privs, then the seccomp filter and Landlock (`inputs`: the grading folder, landlock.worker_paths).
    Returns "" when all hold, else a line saying what does not."""
    problems = [] if no_new_privs() else ["no_new_privs could not be set"]
    problems += [problem for problem in (seccomp_filter(), landlock(own_shm, inputs=inputs)) if problem]
    return "; ".join(problems)
