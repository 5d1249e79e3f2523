"""Hostile submissions against what the worker may write and read on the machine, and the channels that would leave
it (docs/security.md, rows A44-A46, A53, A54): a disk filled from the worker's TMPDIR or /tmp, another checkout of
the kit on the same machine, a POSIX message queue kept after the grade, AF_UNIX sockets held open outside the
sandbox, and files left in a world-writable folder under /tmp for a later worker (a relay of inputs, leftovers
counted against a classmate's disk limit).

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
import time
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
    if "PROBE" in output:  # a write failed (the private tmpfs is full): the worker saw the bound itself
        found = graded.probe(FIRST)
        assert found["written"] <= limit and found["error"] is not None, found
    else:  # the watchdog ended the worker
        assert output.startswith("the worker's files took more than its disk limit"), output
        assert f"{limit / 2**20:.0f} MiB" in output, output
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
@pytest.mark.xfail(
    landlock.abi() == 0,
    strict=True,
    reason="this kernel has no Landlock: a checkout that was not set "
    "up by bootstrap.sh or setup.sh keeps its permissions (docs/security.md, A45)",
)
def test_A45_another_checkout_on_the_machine_is_unreadable(tmp_path, open_folder):
    user_switch("keeping another checkout from the worker")
    clone = checkout_copy(open_folder / "captionkit")
    assert (clone / "autograder/grader/hidden/seed.json").stat().st_mode & stat.S_IROTH  # open, as a clone is
    graded = run_grade(build("A45_other_checkout", tmp_path / "sub", CLONE=clone), ("bleu",))
    assert_contained(graded, within=BOUND)
    found = graded.probe(FIRST)
    assert all(found[name] == "PermissionError" for name in HIDDEN_IN_A_CHECKOUT), found


def test_A45_without_landlock_the_worker_says_so_and_the_note_names_file_permissions(monkeypatch):
    """The path of a kernel without Landlock (this one has it, ABI > 0, or the test above is an expected failure)."""
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    assert (
        landlock.restrict({"/usr": landlock.READ})
        == "no Landlock in this kernel: reads limited by file permissions only"
    )
    assert "reads: file permissions only (this kernel has no Landlock)" in isolation.confinement_note(False, True)


def test_A45_installing_a_checkout_makes_its_hidden_folders_root_only(open_folder):
    """scripts/bootstrap.sh and Gradescope's setup.sh run `python -m autograder.grader.isolation` as root: in the
    checkout it runs from, solutions/ and every hidden/ folder become root's alone."""
    if os.geteuid() != 0:
        pytest.skip("installing for grading runs as root")
    for script in ("scripts/bootstrap.sh", "autograder/grader/templates/setup.sh"):
        assert "-m autograder.grader.isolation" in (ROOT / script).read_text(), script
    clone = checkout_copy(open_folder / "captionkit")
    subprocess.run(
        [sys.executable, "-m", "autograder.grader.isolation"], cwd=clone, check=True, stdout=subprocess.DEVNULL
    )
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
        graded = run_grade(
            build("A46_ipc_and_sockets", tmp_path / "sub", QUEUE=f"/{tag}", ABSTRACT=tag, SOCKET=path), ("bleu",)
        )
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


@pytest.mark.caps
def test_A74_the_sweep_ends_a_process_its_scan_of_proc_misses(monkeypatch):
    """A chain of processes of the sandbox user that forks and leaves in a loop has a new pid at every moment: it
    outlived sweep after sweep of one grade (an outside review, under Docker's capabilities), because a sweep listed
    the user's processes and killed each by a pid that had already left. Had it outlived the last one too, it would
    have met the user's next worker, another submission's in `batch`. The sweep now first kills every process of the
    user at once, as that user (the kernel lets no process fork meanwhile): here a process its scan cannot see at all
    (the worst such race) is ended all the same."""
    user_switch("the sweep of the sandbox user's processes")
    from autograder.grader import sandbox

    isolation = detect()
    hidden = subprocess.Popen(
        ["setpriv", f"--reuid={isolation.uid}", f"--regid={isolation.gid}", "--clear-groups", "sleep", "60"]
    )
    try:
        time.sleep(0.2)
        assert hidden.poll() is None
        monkeypatch.setattr(sandbox, "processes_of", lambda uid: [])  # a scan that finds nothing
        isolation.sweep()
        assert hidden.wait(timeout=5) == -9
    finally:
        hidden.kill()
        hidden.wait()


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
    make = (
        f"import ctypes, os; libc = ctypes.CDLL(None); libc.mq_open.restype = ctypes.c_int; "
        f"assert libc.mq_open({tag.encode()!r}, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0"
    )
    script = (
        f"import json, os, subprocess, sys\n"
        f"from autograder.grader.sandbox import Sandbox, sweep\n"
        f"subprocess.run(['setpriv', '--reuid={isolation.uid}', '--regid={isolation.gid}', '--clear-groups', "
        f"sys.executable, '-c', {make!r}], check=True)\n"
        f"before = os.listdir({str(mounted)!r})\n"
        f"sweep(Sandbox('user', {isolation.uid}, {isolation.gid}))\n"
        f"print(json.dumps({{'before': before, 'after': os.listdir({str(mounted)!r})}}))\n"
    )
    done = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            f'mount -t mqueue mqueue {mounted} && exec "$@"',
            "sh",
            sys.executable,
            "-c",
            script,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout
    listed = json.loads(done.stdout.splitlines()[-1])
    assert tag.lstrip("/") in listed["before"] and tag.lstrip("/") not in listed["after"], listed


# -- A53, A54: a world-writable folder under /tmp that the sandbox user does not own ---------------------------


@pytest.fixture
def shared_drop(open_folder, monkeypatch):
    """A world-writable folder under /tmp owned by root (as /tmp/.X11-unix and /tmp/.ICE-unix are), inside one every
    user may enter; removed afterwards with the rest of `open_folder`. Made after this process's grades searched /tmp,
    so the search is not reused while it exists (test_the_search_for_writable_folders_is_reused_and_looked_into)."""
    from autograder.public.client import disk

    drop = open_folder / "drop"
    drop.mkdir()
    os.chmod(drop, 0o777)
    monkeypatch.setattr(disk, "SEARCH_REUSED_SECONDS", 0.0)
    return drop


def test_the_search_for_writable_folders_is_reused_and_looked_into(open_folder, monkeypatch):
    """The walk through other users' folders is reused for SEARCH_REUSED_SECONDS; a writable folder made since inside
    one it found is found at once, one made inside another user's folder at the next walk."""
    from autograder.public.client import disk

    uid = 65534  # nobody: owns none of these folders
    roots = (str(open_folder),)
    writable = open_folder / "writable"
    writable.mkdir()
    os.chmod(writable, 0o777)
    assert disk.writable_folders(uid, roots) == [str(open_folder), str(writable)]
    inside_writable, inside_other = writable / "new", open_folder / "closed" / "new"
    inside_writable.mkdir()
    inside_other.mkdir(parents=True)
    os.chmod(inside_writable, 0o777)
    os.chmod(inside_other, 0o777)
    assert str(inside_writable) in disk.writable_folders(uid, roots)  # looked into every call
    assert str(inside_other) not in disk.writable_folders(uid, roots)  # the walk is reused
    monkeypatch.setattr(disk, "SEARCH_REUSED_SECONDS", 0.0)
    assert str(inside_other) in disk.writable_folders(uid, roots)  # a new walk finds it


def test_one_walk_serves_every_sandbox_user(open_folder, monkeypatch):
    """A batch sweeps 16 slots, each of its own sandbox user: the walk through other users' folders is made once for
    all of them. A world-writable folder beneath a folder that user A owns is found for B, not for A (A never enters
    its own folders: they are disk_usage's)."""
    from autograder.public.client import disk

    if os.geteuid() != 0:
        pytest.skip("making a folder of another user needs root")
    a, b = 65534, 65533
    own = open_folder / "of_a"
    drop = own / "drop"
    drop.mkdir(parents=True)
    os.chmod(own, 0o755)
    os.chmod(drop, 0o777)
    os.chown(own, a, a)
    scanned = []
    real_scandir = os.scandir
    monkeypatch.setattr(disk.os, "scandir", lambda path: scanned.append(str(path)) or real_scandir(path))
    monkeypatch.setattr(disk, "_searches", {})
    roots = (str(open_folder),)
    assert disk.writable_folders(a, roots) == [str(open_folder)]
    assert disk.writable_folders(b, roots) == [str(open_folder), str(drop)]
    for uid in range(1000, 1016):
        assert disk.writable_folders(uid, roots) == [str(open_folder), str(drop)]
    assert scanned.count(str(own)) == 1, f"A's folder was listed {scanned.count(str(own))} times for 18 users"


def test_one_walk_of_a_root_serves_every_set_of_roots_it_is_in(open_folder, monkeypatch):
    """A grade's disk watch asks for the disk-backed temporary folders, its sweep for all of them: a root in both is
    walked once, and each answer holds what the walk found beneath each of its roots."""
    from autograder.public.client import disk

    first, second = open_folder / "first", open_folder / "second"
    for root in (first, second):
        (root / "closed" / "drop").mkdir(parents=True)
        os.chmod(root, 0o755)
        os.chmod(root / "closed", 0o755)
        os.chmod(root / "closed" / "drop", 0o777)
    scanned = []
    real_scandir = os.scandir
    monkeypatch.setattr(disk.os, "scandir", lambda path: scanned.append(str(path)) or real_scandir(path))
    monkeypatch.setattr(disk, "_searches", {})
    uid = 65534  # nobody: owns none of these folders
    assert disk.writable_folders(uid, (str(first),)) == [str(first), str(first / "closed" / "drop")]
    assert disk.writable_folders(uid, (str(first), str(second))) == [
        str(first),
        str(second),
        str(first / "closed" / "drop"),
        str(second / "closed" / "drop"),
    ]
    walked = scanned.count(str(first / "closed"))
    assert walked == 1, f"{first / 'closed'} was listed {walked} times for two sets of roots"


def test_A53_landlock_gives_the_worker_no_right_in_the_shared_temporary_folders():
    """Its own folder (beneath /tmp, as a grade's is) is everything; /tmp, /var/tmp and /run/lock get no rule."""
    rights = landlock.worker_paths("/tmp/captionkit-grade-x/runtime", "/tmp/captionkit-grade-x/bleu/work")
    assert not set(landlock.SHARED_TEMP) & set(rights), sorted(rights)
    assert rights["/tmp/captionkit-grade-x/bleu/work"] == landlock.EVERYTHING


@pytest.mark.caps
def test_A53_no_relay_through_a_shared_folder_under_tmp(tmp_path, shared_drop):
    """One grade's worker leaves files named after its inputs in the shared folder; a later grade's worker asks for
    each name and must find none (Landlock: no write right under /tmp; without it the sweep removes them)."""
    user_switch("the sweep of the sandbox user's files")
    writer = run_grade(build("A53_tmp_relay", tmp_path / "writer", DROP=shared_drop, MODE="write"), ("bleu",))
    reader = run_grade(build("A53_tmp_relay", tmp_path / "reader", DROP=shared_drop, MODE="read"), ("bleu",))
    assert_contained(writer, within=BOUND)
    assert_contained(reader, within=BOUND)
    wrote, read = writer.probe(FIRST), reader.probe(FIRST)
    assert wrote["wrote"] or wrote["error"] == "PermissionError", wrote
    assert read == {"read": ""}, (wrote, read)
    assert not os.listdir(shared_drop), os.listdir(shared_drop)


SLOW_ONCE = """

import time as _time

_correct_ngram_counts, _slept = ngram_counts, []


def ngram_counts(tokens, n):
    if not _slept:
        _slept.append(_time.sleep(1.5))
    return _correct_ngram_counts(tokens, n)
"""


@pytest.mark.caps
def test_A54_leftovers_in_a_shared_folder_cost_a_classmate_nothing(tmp_path, shared_drop):
    """A worker leaves more files than the worker's file limit in the shared folder; the correct submission graded
    after it by the same grader (the same sandbox user) scores as it does alone."""
    user_switch("the sweep of the sandbox user's files")
    innocent = tmp_path / "innocent"
    innocent.mkdir()
    # Correct, and slow once (its first call waits 1.5 s): the disk watchdog looks while the grader waits for a reply.
    (innocent / "bleu.py").write_text((ROOT / "solutions/bleu.py").read_text() + SLOW_ONCE)
    alone = run_grade(innocent, ("bleu",))
    hostile = run_grade(build("A54_leftovers_zero_a_classmate", tmp_path / "hostile", DROP=shared_drop), ("bleu",))
    after = run_grade(innocent, ("bleu",))
    assert_contained(hostile, within=BOUND)
    assert_contained(after, within=BOUND)
    left = hostile.probe(FIRST)
    assert left["left"] == 4200 or left["error"] == "PermissionError", left
    assert alone.full_marks("bleu"), alone.describe()
    assert after.total("bleu") == alone.total("bleu"), after.describe()
    assert not os.listdir(shared_drop), len(os.listdir(shared_drop))


def test_A53_A54_the_sweep_removes_the_sandbox_user_s_files_in_shared_folders(shared_drop):
    """Without Landlock the worker may write in a world-writable folder it does not own: the sweep finds every file and
    folder of the sandbox user beneath the temporary folders, at any depth, and leaves other users' files."""
    user_switch("the sweep of the sandbox user's files")
    isolation = detect()
    nested = shared_drop / "open"
    nested.mkdir()
    os.chmod(nested, 0o777)
    (shared_drop / "root-file").write_text("kept")
    make = (
        "import os, sys\n"
        "for folder in sys.argv[1:]:\n"
        "    open(os.path.join(folder, 'left'), 'w').close()\n"
        "    os.makedirs(os.path.join(folder, 'tree', 'a', 'b'))\n"
    )
    subprocess.run(
        [
            "setpriv",
            f"--reuid={isolation.uid}",
            f"--regid={isolation.gid}",
            "--clear-groups",
            sys.executable,
            "-c",
            make,
            str(shared_drop),
            str(nested),
        ],
        check=True,
    )
    assert {"left", "tree"} <= set(os.listdir(nested))
    isolation.sweep()
    assert sorted(os.listdir(shared_drop)) == ["open", "root-file"], os.listdir(shared_drop)
    assert os.listdir(nested) == []


def test_A54_the_disk_watchdog_counts_only_what_changed_since_the_worker_started(tmp_path, shared_drop):
    """Files of the sandbox user in a shared folder from before the worker's start (a sweep missed them) are not its
    own; one it writes, or an old one it changes, is."""
    user_switch("telling the worker's files in /tmp from the grader's")
    from autograder.public.client.disk import disk_usage

    uid = detect().uid
    old = [shared_drop / f"old-{i}" for i in range(3)]
    for path in old:
        path.write_bytes(b"x" * 8192)
        os.chown(path, uid, -1)
    time.sleep(0.05)  # past the file system's clock grain
    own = tmp_path / "work"
    own.mkdir()
    since = os.stat(own).st_ctime_ns  # as Worker._start takes it
    time.sleep(0.05)
    assert disk_usage(uid, own, [str(shared_drop)], since) == (0, 0)
    assert disk_usage(uid, own, [str(shared_drop)])[1] == 3  # without a start, every file of the user
    new = shared_drop / "new"
    new.write_bytes(b"x" * 8192)
    os.chown(new, uid, -1)
    os.chmod(old[0], 0o600)
    used, files = disk_usage(uid, own, [str(shared_drop)], since)
    assert files == 2 and used >= 2 * 8192, (used, files)


# -- A56: folders nested past what a recursive clean-up or a walk by path can reach ----------------------------


@pytest.mark.caps
@pytest.mark.parametrize("folder", ["/dev/shm", "TMPDIR"])
def test_A56_folders_nested_thousands_deep_cost_a_classmate_nothing(tmp_path, folder):
    """A worker nests folders 3,000 levels deep (past PATH_MAX) in /dev/shm (the machine's own under Docker's
    capabilities) or in its own folder. Its grade ends with results, nothing of the tree is left, and the correct
    submission graded after it by the same grader scores as it does alone. Before: RecursionError in the sweep of
    every later grade on the machine (each student "grader error" in a batch), or in the grade's own clean-up."""
    if folder == "/dev/shm":
        user_switch("the sweep of the sandbox user's files")
    innocent = tmp_path / "innocent"
    innocent.mkdir()
    (innocent / "bleu.py").write_text((ROOT / "solutions/bleu.py").read_text())
    alone = run_grade(innocent, ("bleu",))
    hostile = run_grade(build("A56_deep_folders", tmp_path / "hostile", FOLDER=folder), ("bleu",))
    after = run_grade(innocent, ("bleu",))
    assert_contained(hostile, within=BOUND)
    assert_contained(after, within=BOUND)
    output = hostile.result(FIRST).output
    if "PROBE" in output and folder == "/dev/shm" and not detect().private_tmp and landlock.abi():
        assert hostile.probe(FIRST)["error"] == "PermissionError", output  # no right in the machine's (A61)
    elif "PROBE" in output:  # the worker finished its tree before the watchdog looked
        assert hostile.probe(FIRST)["made"] > 100, output
    else:  # the disk watchdog found a folder deeper than it looks and ended the worker
        assert output == f"the worker's folders nest more than {limits.WORKER_FOLDER_DEPTH} levels deep", output
    assert alone.full_marks("bleu"), alone.describe()
    assert after.total("bleu") == alone.total("bleu"), after.describe()
    assert not leftovers("captionkit-A56-"), "the nested folders were left behind"


def test_A56_gradescope_writes_results_after_a_grade_that_nested_folders_in_its_own_folder(tmp_path):
    from autograder.grader import gradescope

    root = tmp_path / "autograder"
    build("A56_deep_folders", root / "submission", FOLDER="TMPDIR")
    (root / "results").mkdir()
    gradescope.run(root)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results.get("tests"), results  # the grade's own results, not the placeholder of a failed run
    assert any(t["name"].startswith("3.") or "bleu" in t["name"].lower() for t in results["tests"]), results["tests"][
        :3
    ]


def test_A56_removing_and_walking_a_tree_past_path_max(tmp_path):
    """client.disk.remove_tree deletes a tree 3,000 levels deep with 255-character names, without following a link out
    of it; the disk watchdog's walk names such a tree as too deep instead of failing or missing its files."""
    from autograder.public.client import disk
    from autograder.public.client.errors import FolderTooDeep

    top = tmp_path / "tree"
    top.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("kept")
    try:
        current = os.open(top, os.O_RDONLY)
        for level in range(3000):
            name = "n" * 255 if level % 50 == 0 else "a"
            os.mkdir(name, dir_fd=current)
            below = os.open(name, os.O_RDONLY, dir_fd=current)
            os.close(current)
            current = below
        os.symlink(outside, "link", dir_fd=current)
        os.close(current)
        with pytest.raises(FolderTooDeep, match=f"more than {limits.WORKER_FOLDER_DEPTH} levels deep"):
            disk.disk_usage(None, top)
        disk.remove_tree(top)
        assert not top.exists()
        assert (outside / "kept").read_text() == "kept"
    finally:  # whatever failed above: pytest's own clean-up of old runs recurses once a level and would fail on it
        subprocess.run(["rm", "-rf", "--", str(top)], check=False)
    # A shallow tree is walked whole and counted: every file and folder
    shallow = tmp_path / "shallow"
    (shallow / "a" / "b").mkdir(parents=True)
    (shallow / "a" / "b" / "f").write_text("x")
    assert disk.disk_usage(None, shallow)[1] == 3


# -- A60: file access times, kept by the machine's file system ---------------------------------------------------

CARRIER_ROWS, CARRIER_BITS = ("public", "hidden"), 1 + 8 * 32


def records_access_times(folder: Path) -> bool:
    """Whether a read of a file in `folder`, after its last change, changes its access time (relatime does)."""
    probe = folder / "probe"
    probe.write_bytes(b"x")
    time.sleep(0.05)
    probe.read_bytes()
    status = probe.stat()
    probe.unlink()
    return status.st_atime_ns > status.st_mtime_ns


@pytest.fixture
def grade_folder():
    """A grade's folder made as grade() makes its own (the sandbox user may pass through it), holding rows of files
    nobody has read since they were written: the medium of the access-time relay (any file the worker may read and
    that was not read since its last change is one: the runtime copied for each grade, unread system files)."""
    scratch = Path(tempfile.mkdtemp(prefix="captionkit-grade-"))
    os.chmod(scratch, 0o711)
    for row in CARRIER_ROWS:
        (scratch / "carriers" / row).mkdir(parents=True, mode=0o755)
        for position in range(CARRIER_BITS):
            (scratch / "carriers" / row / str(position)).write_bytes(b"x")
    os.chmod(scratch / "carriers", 0o755)
    try:
        yield scratch
    finally:
        from autograder.public.client import remove_tree

        remove_tree(scratch)


@pytest.mark.caps
def test_A60_no_relay_through_access_times_from_a_worker_holding_hidden_data(tmp_path, grade_folder):
    """Part 4's module spells a text in files' access times from each kind of worker that imports it (the hidden
    checks' worker holds Part 2's reference: it spells that module's names), and Part 2's reads them back into its
    import error, shown at once (its public checks run after Part 4's). What a worker holding hidden data spells never arrives (every such
    worker of the grade runs after every worker whose messages are shown at once); what a public worker spells
    arrives only where the worker's view of the file system records access times."""
    if not records_access_times(grade_folder):
        pytest.skip("this machine's file system records no access times: the relay has no medium here")
    folder = build("A60_access_time_relay", tmp_path / "sub", CARRIERS=str(grade_folder / "carriers"))
    graded = run_grade(folder, ("attention", "decoding"), public_only=False, training="without", scratch=grade_folder)
    assert_contained(graded, within=3 * BOUND)
    shown = graded.results("decoding")[0].output
    assert "RELAY" in shown, shown
    relayed = json.loads(shown.split("RELAY", 1)[1].strip())
    assert relayed["hidden"] == "", f"a worker holding a reference spelled {relayed['hidden']!r} into a public message"
    assert graded.result("with_coords_keeps_dtype_and_features_on_larger_grids").passed, "no hidden check ran"
    expected = "" if detect().private_tmp else "PUBLIC"  # the private mount namespace sees every mount noatime
    assert relayed["public"] == expected, relayed


@pytest.mark.caps
def test_A61_a_worker_writes_in_dev_shm_only_where_it_is_its_own(tmp_path):
    """/dev/shm is the machine's where the grader makes no mount namespace (Docker's capabilities, no root): a file a
    hidden worker leaves there could be read by a classmate's worker graded at the same time (batch --jobs 2). The
    worker may write there only where /dev/shm is a private tmpfs of its own namespace."""
    user_switch("the sandbox user's files in /dev/shm")
    graded = run_grade(build("A53_tmp_relay", tmp_path / "writer", DROP="/dev/shm", MODE="write"), ("bleu",))
    assert_contained(graded, within=BOUND)
    wrote = graded.probe(FIRST)
    if detect().private_tmp:
        assert wrote["wrote"], wrote
    else:
        assert wrote["error"] == "PermissionError", wrote


@pytest.mark.caps
def test_A63_the_worker_reads_no_other_process_s_files_in_proc(tmp_path):
    """Another process's /proc files (the grading process's here; a classmate's worker graded at the same time in a
    batch) are out of the worker's reach: where it has no PID namespace of its own, Landlock gives it only the files of
    /proc that describe the machine; in one, its /proc lists its own processes only."""
    graded = run_grade(build("A63_proc_of_another_process", tmp_path / "sub", PID=str(os.getpid())), ("bleu",))
    assert_contained(graded, within=BOUND)
    probe = graded.probe(FIRST)
    assert probe["stat"] in ("PermissionError", "FileNotFoundError"), probe
