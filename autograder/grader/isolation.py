"""How a worker is isolated on this machine, decided once per grading run.

As root (Gradescope, CI) the worker runs as the dedicated unprivileged user `captionkit-sandbox`, in network, IPC,
mount and PID namespaces of its own when the kernel allows it (root with CAP_SYS_ADMIN: its /proc then lists only
its own processes, under autograder/worker/init.py). Without root (a student's laptop, a TA's account) it runs as
the same user in a separate process with resource limits, in a user namespace with the same four where the kernel
allows one; the command line reports which in one line. Either way the worker gets a fresh session, a scrubbed
environment and resource limits (set by the worker on itself before it imports student code, see
autograder/worker/main.py).

After every worker, `sweep` kills every process of the sandbox user (a `setsid` daemon escapes the
process-group kill) and deletes the files it left in the shared temporary folders, world-writable folders beneath
them included.
"""

from __future__ import annotations

import fcntl
import functools
import os
import platform
import pwd
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.public.client import remove_tree
from autograder.public.client.disk import TEMP_DIRS, writable_folders
from autograder.public.client.processes import processes_of
from autograder.public.limits import WORKER_DISK_BYTES, WORKER_DISK_FILES
from autograder.worker import landlock

SANDBOX_USER = "captionkit-sandbox"
# Graders running at once (a TA's batch with --jobs N) each take their own sandbox user, so that one
# grader's sweep never kills another's worker. A slot is held by an flock for the grader's lifetime.
SLOTS = 16
LOCK_DIR = Path("/run/lock/captionkit") if Path("/run/lock").is_dir() else Path("/tmp/captionkit-locks")
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
_held_slot = None
ROOT = Path(__file__).resolve().parents[2]


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

    def owns(self, path: Path) -> None:
        """Give `path` to the sandbox user (a no-op without one)."""
        if self.uid is not None:
            os.chown(path, self.uid, self.gid)

    def sweep(self, keep: frozenset[int] = frozenset()) -> int:
        """Kill every process of the sandbox user but those in `keep` and delete its temporary files (the module's
        `sweep`)."""
        return sweep(self, keep)


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


def _user(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def slot_user(slot: int) -> str:
    return SANDBOX_USER if slot == 0 else f"{SANDBOX_USER}-{slot}"


def create_users() -> list[str]:
    """Create the sandbox users that do not exist yet (as root, at install time: scripts/bootstrap.sh, the
    Gradescope setup.sh), never while grading. Returns the names created."""
    created = []
    for slot in range(SLOTS):
        name = slot_user(slot)
        if _user(name) is None:
            subprocess.run(
                [
                    "useradd",
                    "--system",
                    "--no-create-home",
                    "--home-dir",
                    "/nonexistent",
                    "--shell",
                    "/usr/sbin/nologin",
                    name,
                ],
                check=True,
                stdin=subprocess.DEVNULL,
            )
            created.append(name)
    return created


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
        user = _user(slot_user(slot))
        if user is None:
            handle.close()
            return None
        _held_slot = handle  # kept open (and locked) until this process exits
        # A sweep before use: a grader killed by its watchdog leaves its workers to the next holder of its user.
        sweep(Sandbox("user", user.pw_uid, user.pw_gid))
        return user
    return None


def sweep_free_slots() -> None:
    """Sweep the sandbox user of every slot no grader holds now (after a batch, whose killed graders could not)."""
    if os.geteuid() != 0 or not LOCK_DIR.is_dir():
        return
    for slot in range(SLOTS):
        user = _user(slot_user(slot))
        if user is None:
            continue
        with open(LOCK_DIR / f"slot-{slot}.lock", "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            sweep(Sandbox("user", user.pw_uid, user.pw_gid))


def detect() -> Sandbox:
    """The strongest isolation this machine allows (decided once per process: a forked child decides anew,
    so it never shares its parent's sandbox user)."""
    return _detect(os.getpid())


# A PID namespace of the worker's own, with /proc mounted for it (so /proc lists its processes only). `--fork`: the
# namespace's first process is a child of unshare; `--kill-child`: it dies with unshare.
PID_NAMESPACE = ["--pid", "--fork", "--kill-child", "--mount-proc"]
# What a worker must be able to do in a candidate isolation: start this Python, find the same torch and every
# standard-library module `import torch` loads here (standard_modules), and read every file of the installed packages
# that import loads here and list their folders (installed_files). Importing torch would prove the same for 1.5 to 2
# CPU s a grade; each part's zygote imports it anyway. The probe prints the version and prefix of the Python it ran: a
# sandbox user who cannot read this interpreter's own folder (pyenv's, under a 0700 /root) starts another Python of
# the same name with this environment's packages, which the isolation note then names (python_note).
PROBE_PROGRAM = """\
import importlib.util, os, sys
origin, standard, paths = sys.argv[1], sys.argv[2].split(","), sys.stdin.read().splitlines()
spec = importlib.util.find_spec("torch")
if spec is None or spec.origin != origin:
    sys.exit(f"torch is at {spec and spec.origin}, not {origin}")
missing = [name for name in standard if importlib.util.find_spec(name) is None]
if missing:
    sys.exit(f"this Python has no {missing}")
unreadable = [p for p in paths if not os.access(p, os.R_OK | (os.X_OK if os.path.isdir(p) else 0))]
if unreadable:
    sys.exit(f"{len(unreadable)} installed files or folders cannot be read, such as {unreadable[0]}")
print(sys.version.split()[0], sys.base_prefix)
"""


def installed_files() -> list[str]:
    """The files of installed packages (site-packages) that `import torch` loads in this process, modules and the
    native libraries they map, with every folder from site-packages down to them: what a worker's imports must read.
    Never the oracle packages' or the kit's hidden paths (protect_hidden makes both root's alone)."""
    import sysconfig

    roots = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("purelib", "platlib")}
    excluded = [os.path.realpath(p) for p in (*oracle_folders(), *(ROOT / rel for rel in HIDDEN_PATHS))]
    loaded = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    try:
        with open("/proc/self/maps") as maps:  # the native libraries: "address perms offset dev inode path"
            loaded |= {fields[5].strip() for fields in (line.split(maxsplit=5) for line in maps) if len(fields) == 6}
    except OSError:  # no /proc: the modules' own files only (their extension modules among them)
        pass
    paths = set()
    for name in loaded:
        if not isinstance(name, str) or not name.startswith("/") or name.endswith(" (deleted)"):
            continue
        path = os.path.realpath(name)
        root = next((r for r in roots if path.startswith(r + os.sep)), None)
        if root is None or any(path == e or path.startswith(e + os.sep) for e in excluded):
            continue
        paths.add(path)
        folder = os.path.dirname(path)
        while len(folder) >= len(root):
            paths.add(folder)
            folder = os.path.dirname(folder)
    return sorted(paths)


def standard_modules() -> list[str]:
    """The top-level standard-library modules this process has loaded (`import torch` among what loaded them):
    another Python that a worker may run (python_note) must have each."""
    return sorted(name for name in list(sys.modules) if name in sys.stdlib_module_names and name != "__main__")


@dataclass(frozen=True)
class ProbeInputs:
    """What the probe checks (PROBE_PROGRAM): torch's path, the standard modules by name, the installed paths (sent
    on its standard input: a list of thousands of paths could outgrow a command line)."""

    origin: str
    standard: tuple[str, ...]
    paths: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def probe_inputs() -> ProbeInputs:
    """The probe's inputs, once per process (detect() may try several isolations): standard_modules and
    installed_files once this process has imported torch."""
    import importlib.util

    import torch  # noqa: F401 (a grader imports it anyway; what it loads is what is listed)

    return ProbeInputs(importlib.util.find_spec("torch").origin, tuple(standard_modules()), tuple(installed_files()))


def probe(prefix: list[str], inputs: ProbeInputs | None = None) -> str | None:
    """Run the probe on `inputs` (by default probe_inputs()) behind `prefix`: the version and prefix of the Python a
    worker would run ("3.11.7 /usr"), or None if it cannot run this Python or read the packages."""
    inputs = inputs or probe_inputs()
    command = [sys.executable, "-I", "-c", PROBE_PROGRAM, inputs.origin, ",".join(inputs.standard)]
    try:
        done = subprocess.run(
            prefix + command,
            input="\n".join(inputs.paths),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def python_note(found: str) -> str:
    """ "" when the probe ran this very Python; else what a TA should know, for the isolation note."""
    version, _, prefix = found.partition(" ")
    if version == platform.python_version() and prefix == sys.base_prefix:
        return ""
    return (
        f"; the worker runs Python {version} of {prefix}, not this {platform.python_version()} of {sys.base_prefix} "
        "(the sandbox user cannot read the interpreter's folder: install Python where other users can)"
    )


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


# What the sandbox user must never read: reference solutions, checks (hidden properties), the hidden seed,
# the kit's tests (they hold edited references) and the repository's history.
HIDDEN_PATHS = ("solutions", "autograder/grader/checks", "autograder/grader/hidden", "tests", "instructor", ".git")


# Packages the grader uses as independent oracles (BLEU): a worker that imported them could hand the check the
# oracle's own answer. The grader (root) still imports them; the sandbox user cannot read them.
ORACLE_PACKAGES = ("nltk", "pycocoevalcap")


def oracle_folders() -> list[Path]:
    """The installed folders of the oracle packages (those that are installed)."""
    import importlib.util

    folders = []
    for name in ORACLE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders += [Path(p) for p in spec.submodule_search_locations]
    return folders


def protect_hidden(root: Path = ROOT) -> list[str]:
    """Make every hidden path under `root`, and the oracle packages, readable by their owner only (root).
    Returns the paths changed."""
    changed = []
    for path in [*(root / rel for rel in HIDDEN_PATHS), *oracle_folders()]:
        if path.exists() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, 0o700)
            changed.append(str(path))
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


def sweep(isolation: Sandbox, keep: frozenset[int] = frozenset()) -> int:
    """Kill every process of the sandbox user but those in `keep` (a part's zygote and its init, between two workers
    of the part) and delete its files and folders in the temporary folders and in every world-writable folder beneath
    them (client.disk.writable_folders). Returns how many processes were killed. A no-op
    without a dedicated user."""
    if isolation.uid is None:
        return 0
    _reap()
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


if __name__ == "__main__":  # python -m autograder.grader.isolation (root, at install): the sandbox users, and the
    # hidden folders of the checkout this module lies in made root's alone (a second clone set up so is closed too)
    print("created: " + (", ".join(create_users()) or "none (all exist)"))
    print("made root-only: " + (", ".join(protect_hidden()) or "nothing (already)"))
