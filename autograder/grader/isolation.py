"""How a worker is isolated on this machine, decided once per grading run.

As root (Gradescope, CI) the worker runs as the dedicated unprivileged user `captionkit-sandbox`, in network, IPC,
mount and PID namespaces of its own when the kernel allows it (root with CAP_SYS_ADMIN: its /proc then lists only
its own processes, under autograder/worker/init.py). Without root (a student's laptop, a TA's account) it runs as
the same user in a separate process with resource limits, in a user namespace with the same four where the kernel
allows one; the command line reports which in one line. Either way the worker gets a fresh session, a scrubbed
environment and resource limits (set by the worker on itself before it imports student code, see
autograder/worker/main.py).

What a detected isolation is, and the sweep after every worker: autograder.grader.sandbox; the sandbox users and
their slots: autograder.grader.sandbox_users; the probe that tries a candidate isolation:
autograder.grader.sandbox_probe; what the sandbox user must never read: autograder.grader.hidden_paths.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from autograder.grader.hidden_paths import protect_hidden
from autograder.grader.sandbox import Sandbox, become_subreaper
from autograder.grader.sandbox_probe import probe, python_note
from autograder.grader.sandbox_users import SANDBOX_USER, _claim_user, create_users
from autograder.grader.sandbox_users import sweep_free_slots as sweep_free_slots  # gradescope.py imports it from here
from autograder.public.limits import WORKER_DISK_BYTES, WORKER_DISK_FILES
from autograder.worker import landlock

# Run as root in the worker's new mount namespace before the user switch, in the part's folder. Its /dev/shm (memory)
# gets a small tmpfs of its own, and one tmpfs of WORKER_DISK_BYTES and WORKER_DISK_FILES (mounted first on /var/tmp)
# holds the worker's own folder (`work`: its HOME, TMPDIR and current folder), /run/lock and /var/tmp, so what it
# writes there together is bounded in size and number. /tmp, which holds the grader's folders, stays the machine's:
# the worker's files there are watched (client.disk.disk_usage). `work` is missing only when the isolation is probed.
#
# First, every mount that holds files (not /proc, /sys and the like) is bound again `noatime` in the namespace (its
# other flags kept): a read there leaves no access time for a later worker to read back (docs/security.md, A60).
PRIVATE_TMP_BYTES = 64 * 1024**2
PSEUDO_FILE_SYSTEMS = (
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "devpts",
    "mqueue",
    "securityfs",
    "debugfs",
    "tracefs",
    "bpf",
    "pstore",
    "configfs",
    "fusectl",
    "hugetlbfs",
    "autofs",
    "binfmt_misc",
    "nsfs",
)
ATIME_FLAGS = ("relatime", "strictatime", "noatime", "nodiratime", "lazytime")
# /proc/self/mountinfo: field 5 is the mount point, 6 its flags, the file system type follows the field "-". A point
# with an escaped character (\040 for a space) is left as it is.
NOATIME_VIEW = (
    'awk \'{for (i = 7; $i != "-"; i++); type = $(i + 1)}'
    f" type !~ /^({'|'.join(PSEUDO_FILE_SYSTEMS)})$/ && $5 !~ /\\\\/"
    ' {n = split($6, flag, ","); kept = "noatime"; for (j = 1; j <= n; j++)'
    f' if (flag[j] !~ /^({"|".join(ATIME_FLAGS)})$/) kept = kept "," flag[j]; print kept, $5}}\''
    " /proc/self/mountinfo | while read -r flags point; do"
    ' mount -o "remount,bind,$flags" "$point" 2>/dev/null || true; done'
)
PRIVATE_TMP = (
    f"{NOATIME_VIEW}; mount -t tmpfs -o size={PRIVATE_TMP_BYTES},mode=1777,nosuid,nodev tmpfs /dev/shm"
    f" && mount -t tmpfs -o size={WORKER_DISK_BYTES},nr_inodes={WORKER_DISK_FILES},mode=755,nosuid,nodev "
    "tmpfs /var/tmp && mkdir -m 1777 /var/tmp/lock /var/tmp/tmp && mkdir -m 700 /var/tmp/work"
    " && if [ -d /run/lock ]; then mount --bind /var/tmp/lock /run/lock; fi"
    " && if [ -d work ]; then chown --reference=work /var/tmp/work && mount --bind /var/tmp/work work; fi"
    ' && mount --bind /var/tmp/tmp /var/tmp && unset PWD OLDPWD && exec "$@"'
)


def _run_quietly(cmd: list[str], timeout: float = 60) -> bool:
    try:
        return (
            subprocess.run(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        return False


def detect() -> Sandbox:
    """The strongest isolation this machine allows (decided once per process: a forked child decides anew,
    so it never shares its parent's sandbox user)."""
    return _detect(os.getpid())


# A PID namespace of the worker's own, with /proc mounted for it (so /proc lists its processes only). `--fork`: the
# namespace's first process is a child of unshare; `--kill-child`: it dies with unshare.
PID_NAMESPACE = ["--pid", "--fork", "--kill-child", "--mount-proc"]


# The worker's program starts with no capability: an empty bounding set (so not even root regains one through a
# program it runs), no inheritable ones, no_new_privs.
NO_CAPABILITIES = ["setpriv", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]


def _namespaces() -> tuple[list[str], bool]:
    """The `unshare` prefix of the strongest namespaces this grader may make for a worker (as root), and whether they
    include a PID namespace. Each is tried by actually starting a program that way."""
    private = ["unshare", "--net", "--ipc", "--mount"]
    private_tmp = ["--", "sh", "-c", PRIVATE_TMP, "sh"]
    if shutil.which("unshare"):
        for prefix, pids in (
            (private + PID_NAMESPACE + private_tmp, True),
            (private + private_tmp, False),
            (["unshare", "--net", "--ipc", "--"], False),
        ):
            if _run_quietly(prefix + ["true"]):
                return prefix, pids
    return [], False


@functools.lru_cache(maxsize=4)
def _detect(pid: int) -> Sandbox:
    """detect(), checked by actually starting Python that way."""
    if os.geteuid() == 0:
        net, pids = _namespaces()
        user = _claim_user()
        if user is None:
            return Sandbox(
                "process",
                note="isolation: separate process with limits (no free sandbox user "
                f"{SANDBOX_USER}[-N]: create them once, as root, with "
                "scripts/bootstrap.sh or python -m autograder.grader.isolation)",
            )
        # The worker keeps no capability (none now, none through a setuid or file-capability program later).
        switch = [
            "setpriv",
            f"--reuid={user.pw_uid}",
            f"--regid={user.pw_gid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
        ]
        found = probe(net + switch) if shutil.which("setpriv") else None
        if found:
            protect_hidden()
            become_subreaper()
            where = "no network (namespace)" if net else "no namespaces (no CAP_SYS_ADMIN): sockets refused by seccomp"
            where += (
                ", own PID namespace"
                if pids
                else ", no PID namespace (other processes out of reach, their /proc files unreadable where Landlock is)"
            )
            return Sandbox(
                "user",
                user.pw_uid,
                user.pw_gid,
                bool(net),
                tuple(net + switch),
                private_tmp=PRIVATE_TMP in net,
                pid_namespace=pids,
                template=not python_note(found),
                note=f"isolation: worker runs as {user.pw_name}, no capabilities, {where}; "
                f"{confinement_note(PRIVATE_TMP in net, True)}; {_capabilities()}"
                f"{python_note(found)}",
            )
        # Without a user to switch to, the worker still runs as root, but with no capability (it reads what root
        # owns, not what other users keep to themselves, and cannot take over the grader's processes).
        drop = NO_CAPABILITIES if shutil.which("setpriv") and probe(net + NO_CAPABILITIES) else []
        return Sandbox(
            "process",
            network_namespace=bool(net),
            prefix=tuple(net + drop),
            private_tmp=PRIVATE_TMP in net,
            pid_namespace=pids,
            note=f"isolation: separate process with limits{', no network' if net else ''}"
            f"{', own PID namespace' if pids else ''}{', no capabilities' if drop else ''}; "
            f"{confinement_note(PRIVATE_TMP in net, False)} "
            f"({SANDBOX_USER} cannot run this Python: make the interpreter and its packages "
            "readable by other users)",
        )
    return unprivileged()


def unprivileged() -> Sandbox:
    """The isolation of a grader run without root (a laptop): a separate process with limits, in a user namespace
    with its own network, IPC, mount and PID namespaces where the kernel lets an unprivileged user make one (else
    with its own network only, else none), holding no capability in it. Checked by actually starting Python that
    way."""
    user_net = ["unshare", "--user", "--map-root-user", "--net"]
    # Root of its user namespace, the worker would hold every capability there (its init's /proc files, root's once
    # init is not dumpable, would be its own): setpriv empties the bounding set first, so the worker's program starts
    # with none, as the sandbox user does in the root modes.
    no_capabilities = NO_CAPABILITIES if shutil.which("setpriv") else []
    for prefix, pids in (
        (user_net + ["--ipc", "--mount", *PID_NAMESPACE, "--", *no_capabilities], True),
        (user_net + ["--", *no_capabilities], False),
    ):
        if shutil.which("unshare") and probe(prefix):
            return Sandbox(
                "process",
                network_namespace=True,
                prefix=tuple(prefix),
                pid_namespace=pids,
                note="isolation: separate process with limits, no network"
                f"{', own PID namespace' if pids else ''}; {confinement_note(False, False)} "
                "(not root: no user switch)",
            )
    return Sandbox(
        "process",
        note=f"isolation: separate process with limits; {confinement_note(False, False)} (not root: no user switch)",
    )


def confinement_note(private_tmp: bool, sandbox_user: bool) -> str:
    """What bounds the worker's files and what keeps its reads to what it needs, in words, for the isolation note."""
    mib, files = f"{WORKER_DISK_BYTES / 2**20:.0f} MiB", f"{WORKER_DISK_FILES} files"
    if private_tmp:
        disk = (
            f"disk: its folder (HOME, TMPDIR), /var/tmp and /run/lock in one private {mib} tmpfs of {files}, "
            f"/dev/shm in a {PRIVATE_TMP_BYTES / 2**20:.0f} MiB one, its files in /tmp watched (killed past {mib})"
        )
    elif sandbox_user:
        disk = (
            f"disk: its files in its folder (HOME, TMPDIR), /tmp, /var/tmp and /run/lock watched (killed past "
            f"{mib} or {files}; /dev/shm with its memory)"
        )
    else:
        disk = f"disk: its folder (HOME, TMPDIR) watched (killed past {mib} or {files}), other files capped one by one"
    version = landlock.abi()
    refused = "/tmp, /var/tmp or /run/lock" if private_tmp else "/tmp, /var/tmp, /run/lock or the machine's /dev/shm"
    reads = (
        f"reads: Landlock (ABI {version}) allows only the system's programs and libraries, this Python and its "
        f"packages, its runtime and grading folder (no right in {refused})"
        if version
        else "reads: file permissions only (this kernel has no Landlock)"
    )
    if private_tmp:
        reads += ", every mount seen noatime (a read leaves no access time)"
    return f"{disk}; {reads}"


def _capabilities() -> str:
    """Which capability set this grader runs with, in words."""
    try:
        effective = int(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff:")), 16)
    except (OSError, StopIteration, ValueError):
        return "capabilities unknown"
    return "grader has all capabilities" if effective >> 21 & 1 else "grader has no CAP_SYS_ADMIN (as in Docker)"


if __name__ == "__main__":  # python -m autograder.grader.isolation (root, at install): the sandbox users, and the
    # hidden folders of the checkout this module lies in made root's alone (a second clone set up so is closed too)
    print("created: " + (", ".join(create_users()) or "none (all exist)"))
    print("made root-only: " + (", ".join(protect_hidden()) or "nothing (already)"))
