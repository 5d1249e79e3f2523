"""Hostile submissions against what the worker may write and read on the machine, and the channels that would leave
it (docs/security.md, rows A44-A46): a disk filled from the worker's TMPDIR or /tmp, another checkout of the kit on
the same machine, a POSIX message queue kept after the grade, and AF_UNIX sockets held open outside the sandbox.

Each test grades with the real grader (harness.run_grade) and asserts the row's outcome and what every row keeps
(harness.assert_contained).
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.grader import isolation
from autograder.grader.isolation import detect
from autograder.public import limits
from autograder.worker import landlock
from tests.hostile import harness
from tests.hostile.harness import ROOT, assert_contained, build, run_grade
from tests.hostile.test_hostile import BOUND, FIRST, user_switch

HIDDEN_IN_A_CHECKOUT = ("solutions/bleu.py", "solutions/decoding.py", "autograder/grader/hidden/seed.json")


@pytest.fixture(autouse=True, scope="module")
def adopt_orphans():
    harness.set_subreaper(True)
    yield
    harness.set_subreaper(False)
    harness.reap_orphans()


@pytest.fixture
def open_folder():
    """A fresh folder in the system's temporary folder that every user may enter and list (as a clone made there
    is); removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="captionkit-A4x-"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def leftovers(pattern: str) -> list[str]:
    """Files of the sandbox user named `pattern`* in the machine's temporary folders."""
    uid = harness.sandbox_uid()
    found = []
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        for path in Path(folder).glob(f"{pattern}*"):
            try:
                if uid is None or path.lstat().st_uid == uid:
                    found.append(str(path))
            except OSError:
                continue
    return found


# -- A44: the disk ---------------------------------------------------------------------------------------------

@pytest.mark.caps
@pytest.mark.parametrize("folder", ["TMPDIR", "/tmp"])
def test_A44_what_the_worker_writes_is_bounded(tmp_path, folder):
    if folder == "/tmp":
        user_switch("telling the worker's files in /tmp from the grader's")
    graded = run_grade(build("A44_disk_flood", tmp_path / "sub", FOLDER=folder), ("bleu",))
    assert_contained(graded, within=BOUND)
    output = graded.result(FIRST).output
    limit = limits.WORKER_DISK_BYTES
    if "PROBE" in output:   # a write failed (the private tmpfs is full): the worker saw the bound itself
        found = graded.probe(FIRST)
        assert found["written"] <= limit and found["error"] is not None, found
    else:                   # the watchdog ended the worker
        assert output.startswith("the worker's files took more than its disk limit"), output
        assert f"{limit / 2 ** 20:.0f} MiB" in output, output
    assert not leftovers("captionkit-A44-"), "the flood's files were left behind"


# -- A45: another checkout of the kit ---------------------------------------------------------------------------

def checkout_copy(target: Path) -> Path:
    """A second checkout of this kit in `target`: every tracked file, as it is in this working tree, with a
    clone's modes (files 0644, folders 0755)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, stdout=subprocess.PIPE).stdout
    for name in filter(None, listed.decode().split("\0")):
        source, destination = ROOT / name, target / name
        if not source.is_file():
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
        os.chmod(destination, 0o644)
    for folder in [target, *(p for p in target.rglob("*") if p.is_dir())]:
        os.chmod(folder, 0o755)
    return target


@pytest.mark.caps
@pytest.mark.xfail(landlock.abi() == 0, strict=True, reason="this kernel has no Landlock: a checkout that was not set "
                   "up by bootstrap.sh or setup.sh keeps its permissions (docs/security.md, A45)")
def test_A45_another_checkout_on_the_machine_is_unreadable(tmp_path, open_folder):
    user_switch("keeping another checkout from the worker")
    clone = checkout_copy(open_folder / "captionkit")
    assert (clone / "autograder/grader/hidden/seed.json").stat().st_mode & stat.S_IROTH   # open, as a clone is
    graded = run_grade(build("A45_other_checkout", tmp_path / "sub", CLONE=clone), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert all(found[name] == "PermissionError" for name in HIDDEN_IN_A_CHECKOUT), found


def test_A45_without_landlock_the_worker_says_so_and_the_note_names_file_permissions(monkeypatch):
    """The path of a kernel without Landlock (this one has it, ABI > 0, or the test above is an expected failure)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    assert landlock.restrict({"/usr": landlock.READ}) == "no Landlock in this kernel: reads limited by file permissions only"
    assert "reads: file permissions only (this kernel has no Landlock)" in isolation.confinement_note(False, True)


def test_A45_installing_a_checkout_makes_its_hidden_folders_root_only(open_folder):
    """scripts/bootstrap.sh and Gradescope's setup.sh run `python -m autograder.grader.isolation` as root: in the
    checkout it runs from, solutions/ and every hidden/ folder become root's alone."""
    if os.geteuid() != 0:
        pytest.skip("installing for grading runs as root")
    for script in ("scripts/bootstrap.sh", "autograder/grader/templates/setup.sh"):
        assert "-m autograder.grader.isolation" in (ROOT / script).read_text(), script
    clone = checkout_copy(open_folder / "captionkit")
    subprocess.run([sys.executable, "-m", "autograder.grader.isolation"], cwd=clone, check=True,
                   stdout=subprocess.DEVNULL)
    for folder in ("solutions", "autograder/grader/hidden"):
        assert stat.S_IMODE((clone / folder).stat().st_mode) == 0o700, folder


# -- A46: message queues and sockets ----------------------------------------------------------------------------

def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mq_open.restype = ctypes.c_int
    return libc


def queue_exists(name: str) -> bool:
    """Whether the POSIX message queue `name` exists in this process's IPC namespace (removing it if so)."""
    libc = _libc()
    fd = libc.mq_open(name.encode(), os.O_RDONLY, 0, None)
    if fd < 0:
        return False
    libc.mq_close(fd)
    libc.mq_unlink(name.encode())
    return True


def accepted(listener: socket.socket) -> int:
    """Connections waiting on `listener`."""
    listener.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = listener.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


@pytest.mark.caps
def test_A46_no_queue_survives_and_no_socket_reaches_outside(tmp_path, open_folder):
    tag = f"captionkit-A46-{os.getpid()}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + tag)
    abstract.listen(8)
    path = open_folder / "open.sock"
    on_disk = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    on_disk.bind(str(path))
    os.chmod(path, 0o777)
    on_disk.listen(8)
    try:
        graded = run_grade(build("A46_ipc_and_sockets", tmp_path / "sub", QUEUE=f"/{tag}", ABSTRACT=tag,
                                 SOCKET=path), ("bleu",))
        reached = {"abstract": accepted(abstract), "file": accepted(on_disk)}
    finally:
        abstract.close()
        on_disk.close()
        survived = queue_exists(f"/{tag}")
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert not survived, f"the worker's message queue outlived the grade ({found})"
    assert reached == {"abstract": 0, "file": 0}, (reached, found)
    assert found["queue"].startswith("refused"), found
    assert found["abstract"].startswith("PermissionError") and found["file"].startswith("PermissionError"), found


def test_A46_the_sweep_removes_the_sandbox_user_s_message_queues(tmp_path):
    """A queue the sandbox user made (here without the worker's seccomp filter, which refuses mq_open) is removed by
    the sweep, wherever the message-queue file system is mounted (Docker mounts it at /dev/mqueue)."""
    user_switch("the sweep of the sandbox user's queues")
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--mount", "true"]).returncode != 0:
        pytest.skip("mounting a message-queue file system to list the queues needs CAP_SYS_ADMIN")
    isolation = detect()
    tag = f"/captionkit-A46-sweep-{os.getpid()}"
    mounted = tmp_path / "mqueue"
    mounted.mkdir()
    make = (f"import ctypes, os; libc = ctypes.CDLL(None); libc.mq_open.restype = ctypes.c_int; "
            f"assert libc.mq_open({tag.encode()!r}, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0")
    script = (f"import json, os, subprocess, sys\n"
              f"from autograder.grader.isolation import Isolation, sweep\n"
              f"subprocess.run(['setpriv', '--reuid={isolation.uid}', '--regid={isolation.gid}', '--clear-groups', "
              f"sys.executable, '-c', {make!r}], check=True)\n"
              f"before = os.listdir({str(mounted)!r})\n"
              f"sweep(Isolation('user', {isolation.uid}, {isolation.gid}))\n"
              f"print(json.dumps({{'before': before, 'after': os.listdir({str(mounted)!r})}}))\n")
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           f"mount -t mqueue mqueue {mounted} && exec \"$@\"", "sh", sys.executable, "-c", script],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    listed = json.loads(done.stdout.splitlines()[-1])
    assert tag.lstrip("/") in listed["before"] and tag.lstrip("/") not in listed["after"], listed
