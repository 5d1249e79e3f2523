"""The template (autograder/worker/template.py, client.template): every zygote of a grade forked from one interpreter
that imported torch once, each fork entering the worker's sandbox itself (autograder/worker/sandbox_entry.py).

What must hold: a forked zygote is confined exactly as one started behind the isolation's prefix; the template is
reused by every grade of a process (batch) and reaches none of one submission's state to the next; a runtime copy a
worker changed is never forked from again.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing.forkserver
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.grader import batch_jobs, batch_worker, isolation
from autograder.grader.sandbox import Sandbox, entry_of
from autograder.public.client import Worker, copy_runtime, remove_tree, template
from autograder.public.limits import Deadline

ROOT = Path(__file__).resolve().parents[2]
SWITCH = ["setpriv", "--reuid=901", "--regid=902", "--clear-groups", *isolation.NO_CAPABILITIES[1:]]
PRIVATE = ["--", "sh", "-c", isolation.PRIVATE_TMP, "sh"]


def _entry(namespaces=(), private_tmp=None, uid=None, gid=None, drop=False) -> dict:
    return {
        "namespaces": list(namespaces),
        "private_tmp": private_tmp,
        "uid": uid,
        "gid": gid,
        "drop_capabilities": drop,
    }


@pytest.mark.parametrize(
    ("prefix", "entry"),
    [
        ([], _entry()),
        (
            ["unshare", "--net", "--ipc", "--mount", *isolation.PID_NAMESPACE, *PRIVATE, *SWITCH],
            _entry(["net", "ipc", "mount", "pid"], isolation.PRIVATE_TMP, 901, 902, True),
        ),
        (
            ["unshare", "--net", "--ipc", "--mount", *PRIVATE, *SWITCH],
            _entry(["net", "ipc", "mount"], isolation.PRIVATE_TMP, 901, 902, True),
        ),
        (["unshare", "--net", "--ipc", "--", *SWITCH], _entry(["net", "ipc"], None, 901, 902, True)),
        (SWITCH, _entry([], None, 901, 902, True)),
        (isolation.NO_CAPABILITIES, _entry(drop=True)),
        (["unshare", "--net", "--ipc", "--", *isolation.NO_CAPABILITIES], _entry(["net", "ipc"], drop=True)),
        (
            ["unshare", "--user", "--map-root-user", "--net", "--ipc", "--mount", *isolation.PID_NAMESPACE, "--"]
            + isolation.NO_CAPABILITIES,
            _entry(["user", "net", "ipc", "mount", "pid"], drop=True),
        ),
        (["unshare", "--user", "--map-root-user", "--net", "--"], _entry(["user", "net"])),
    ],
)
def test_every_prefix_the_isolation_makes_reads_as_an_entry(prefix, entry):
    assert entry_of(tuple(prefix)) == entry


@pytest.mark.parametrize(
    "prefix",
    [
        ["firejail", "--"],
        ["unshare", "--net", "--cgroup", "--"],
        ["unshare", "--pid", "--"],  # a PID namespace without its first process forked
        ["unshare", "--user", "--net", "--"],  # a user namespace that maps nobody
        ["setpriv", "--reuid=5", "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"],
        ["setpriv", "--no-new-privs", "--"],  # capabilities kept
        ["unshare", "--net"],
    ],
)
def test_a_prefix_the_template_cannot_enter_is_refused(prefix):
    with pytest.raises(ValueError):
        entry_of(tuple(prefix))


# What a zygote's worker reports of its own confinement, raised at import so that it reaches the grader as the
# import error's message (the probe's output: one JSON object).
PROBE = """
import json, os, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
kept = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
mounts = {f.split()[4]: f.split(" - ")[1].split()[0] for f in open("/proc/self/mountinfo")}
try:
    os.listdir("/tmp")
    tmp = "listed"
except OSError as exc:
    tmp = type(exc).__name__
found = {
    "status": {k: status[k].split() for k in kept},
    "ns": {k: os.readlink(f"/proc/self/ns/{k}") for k in ("net", "ipc", "mnt", "pid", "user")},
    "mounts": [mounts.get(p) for p in ("/dev/shm", "/var/tmp", "/proc")],
    "tmp": tmp,
    "own_proc": os.readlink("/proc/self") == str(os.getpid()),  # /proc mounted for its PID namespace, if any
    "environment": sorted(os.environ),
    "hash": [sys.flags.hash_randomization, hash("captionkit")],  # a submission's set of strings iterates alike in every grade
}
raise RuntimeError("PROBE" + json.dumps(found, separators=(",", ":")))
"""


@pytest.fixture
def open_folder():
    """A folder the sandbox user may pass through (pytest's own are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="captionkit-template-test-"))
    os.chmod(folder, 0o711)
    yield folder
    remove_tree(folder)


def _probe(folder: Path, name: str, isolated: Sandbox) -> dict:
    submission = folder / name / "submission"
    submission.mkdir(parents=True)
    (submission / "bleu.py").write_text(PROBE)
    runtime = copy_runtime(folder / name / "runtime")
    worker = Worker("bleu", submission, folder / name / "scratch", runtime, isolated, deadline=Deadline.after(60, ""))
    try:
        assert worker.import_error is not None, worker.dead_reason
        message = worker.import_error.detail
    finally:
        worker.close()
    found = json.loads(message[message.index("PROBE") + len("PROBE") :])
    own = {k: os.readlink(f"/proc/self/ns/{k}") for k in found["ns"]}
    found["ns"] = sorted(k for k in found["ns"] if found["ns"][k] != own[k])  # the namespaces of its own
    return found


def _isolations() -> list[tuple[str, Sandbox]]:
    found = [("detected", isolation.detect())]
    if os.geteuid() == 0:  # as root the grader may also run behind what a laptop gets, and without a sandbox user
        found.append(("unprivileged", isolation.unprivileged()))
        found.append(("process", Sandbox("process", prefix=tuple(isolation.NO_CAPABILITIES))))
    return found


@pytest.mark.caps
@pytest.mark.parametrize("index", range(3))
def test_a_zygote_forked_by_the_template_is_confined_as_one_started_behind_the_prefix(open_folder, index):
    """Users, groups, capabilities, no_new_privs, seccomp, namespaces, private mounts, Landlock and environment: the
    same, whichever way the zygote came to be."""
    choices = _isolations()
    if index >= len(choices):
        pytest.skip("as root only")
    name, isolated = choices[index]
    if not isolated.template:
        pytest.skip(f"{name}: no template here ({isolated.note})")
    forked = _probe(open_folder, "forked", isolated)
    started = _probe(open_folder, "started", dataclasses.replace(isolated, template=False))
    assert forked == started, name
    assert forked["hash"] == [0, _hash_with_seed_zero("captionkit")], name
    if isolated.uid is not None:  # the sandbox user, with no capability at all
        assert forked["status"]["Uid"] == [str(isolated.uid)] * 4
        assert forked["status"]["CapBnd"] == forked["status"]["CapPrm"] == ["0000000000000000"]
    assert forked["status"]["NoNewPrivs"] == ["1"] and forked["status"]["Seccomp"] == ["2"]


def _hash_with_seed_zero(text: str) -> int:
    """hash(text) in an interpreter started with PYTHONHASHSEED=0, as every worker is."""
    found = subprocess.run(
        [sys.executable, "-c", f"print(hash({text!r}))"],
        env={"PYTHONHASHSEED": "0", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(found.stdout)


def _marking_module(reference: str) -> str:
    """The reference module, which at import leaves a mark wherever a process's state could carry it to another
    submission's workers: torch, a shared module, builtins, the environment, the worker's runtime files (where its
    user may write them) and its working folder."""
    return (
        reference
        + """
import builtins as _b, os as _os
import shared as _shared, torch as _t
_t.captionkit_mark = _shared.captionkit_mark = _b.captionkit_mark = 1
_os.environ["CAPTIONKIT_MARK"] = "1"
_here = _os.path.dirname(_shared.__file__)  # shared/ of the worker's runtime copy
for _name in ("__init__.py", "seeding.py", "secrets.py"):
    try:
        with open(_os.path.join(_here, _name), "a") as _f:
            _f.write("\\nimport builtins; builtins.captionkit_mark = 1\\n")
    except OSError:
        pass
"""
    )


CHECK_MARKS = """
import builtins as _b, os as _os
import shared as _shared, torch as _t
_marks = [hasattr(_t, "captionkit_mark"), hasattr(_shared, "captionkit_mark"), hasattr(_b, "captionkit_mark"),
          "CAPTIONKIT_MARK" in _os.environ]
if any(_marks):
    raise RuntimeError(f"a mark of the submission before: {_marks}")
"""


def _maps(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


def test_a_batch_worker_lends_one_template_to_every_submission_and_nothing_of_one_reaches_the_next(open_folder):
    """Two submissions graded one after the other by one batch worker, each in a grading process of its own: the
    first leaves marks everywhere its process's state could carry them; the second, the reference but for a check of
    those marks at import, gets every point, its zygotes forked from the same template, which imported torch for
    them (the grading processes never started one of their own), and its grading process forked by the same
    forkserver, which imported torch for the grading processes."""
    reference = (ROOT / "solutions" / "decoding.py").read_text()
    jobs = []
    for name, text in (("marking", _marking_module(reference)), ("checking", reference + CHECK_MARKS)):
        (open_folder / name).mkdir()
        (open_folder / name / "decoding.py").write_text(text)
        files = batch_jobs.snapshot(open_folder / name)
        jobs.append(batch_jobs.Job(name, name, files, ("decoding",), False, batch_jobs.kit_fingerprint()))
    template.close_template()
    first = batch_worker.grade_job(jobs[0])
    kept = template._current
    assert kept is not None and kept.running
    if os.geteuid() == 0:  # the template is not dumpable: only root reads its maps
        assert "libtorch" in _maps(kept.proc.pid)
    forkserver = multiprocessing.forkserver._forkserver._forkserver_pid
    assert forkserver is not None and "libtorch" in _maps(forkserver)
    second = batch_worker.grade_job(jobs[1])
    assert multiprocessing.forkserver._forkserver._forkserver_pid == forkserver
    for graded in (first, second):  # the marks cost the first nothing either
        tests = graded["results"]["tests"]
        assert graded["results"]["score"] == sum(t["max_score"] for t in tests) > 0, [t["output"] for t in tests][:3]
    if kept.intact:  # a worker that could write to the runtime copy ends its template (test below)
        assert template._current is kept, "a new template for the second submission"


def test_a_runtime_copy_a_worker_changed_is_never_forked_from_again(open_folder):
    template.close_template()  # a template of this process's own (not one lent to it), which it ends when replaced
    environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    first = template.current_template(environment)
    assert template.current_template(environment) is first
    planted = first.folder / "runtime" / "shared" / "secrets.py"  # would shadow the standard module in a zygote
    planted.write_text("LEAK = 1\n")
    second = template.current_template(environment)
    assert second is not first and not first.folder.exists()
    assert second.intact and second.running
    (second.folder / "runtime" / "autograder" / "worker" / "main.py").write_text("")
    assert template.current_template(environment) is not second
