"""`batch --scheduler` on a real dask.distributed cluster on this machine: a `dask scheduler` and two `dask worker`
processes started as a TA would start them (docs/batch.md), a small class graded through them, compared with a
local batch; a worker killed in the middle of a grade loses no submission, and a rerun resumes.

Submissions hold only bleu.py (Part 3 grades in seconds); needs the extra `.[cluster]` (bootstrap installs it)."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from distributed import Client

from autograder.grader import batch
from autograder.public.client.disk import passable_folder

pytestmark = pytest.mark.xdist_group("cluster")  # one worker starts the cluster and grades the local reference

ROOT = Path(__file__).resolve().parents[2]
REFERENCE, STUB = ROOT / "solutions" / "bleu.py", ROOT / "assignments" / "bleu.py"


def _dask(*args: str, log: Path, temporary: str) -> subprocess.Popen:
    with open(log, "wb") as f:
        return subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=f,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=log.parent,
            start_new_session=True,
            env={**os.environ, "TMPDIR": temporary},
        )


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(scheduler address, the two worker processes): `dask scheduler` and `dask worker --nthreads 1 --no-nanny`
    (without a nanny, a killed worker stays dead)."""
    folder = tmp_path_factory.mktemp("cluster")
    file = folder / "scheduler.json"
    # The cluster's temporary folder: its workers are killed, not ended, so what they keep there for as long as they
    # run (a template, a forkserver's socket) would stay in the machine's. The sandbox users pass through it.
    with passable_folder("captionkit-test-cluster-") as temporary:
        scheduler = _dask(
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(file),
            log=folder / "scheduler.log",
            temporary=temporary,
        )
        workers = []
        try:
            deadline = time.monotonic() + 120
            while not file.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            address = json.loads(file.read_text())["address"]
            workers = [
                _dask(
                    "worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--name",
                    f"w{i}",
                    log=folder / f"worker-{i}.log",
                    temporary=temporary,
                )
                for i in range(2)
            ]
            with Client(address, timeout="60s") as client:
                client.wait_for_workers(2, timeout=120)
            yield address, workers
        finally:
            for proc in [*workers, scheduler]:
                _stop(proc)


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """A class of three graded submissions (one with a linked decoding.py) and an unreadable zip."""
    root = tmp_path_factory.mktemp("class")
    for name, source in (("ada", REFERENCE), ("ben", STUB), ("cy", REFERENCE)):
        (root / name).mkdir()
        (root / name / "bleu.py").write_text(source.read_text())
    (root / "cy" / "decoding.py").symlink_to("/etc/passwd")
    (root / "dee.zip").write_bytes(b"not a zip")
    return root


@pytest.fixture(scope="module")
def local(klass, tmp_path_factory):
    """The same class graded by a local batch (--jobs 1, in this process)."""
    out = tmp_path_factory.mktemp("local")
    batch.run(klass, out)
    return out


def comparable(path: Path) -> dict:
    """A results.json without what legitimately differs between two grades of the same submission: the seconds
    it took, and which of the machine's sandbox users ran it."""
    document = json.loads(path.read_text())
    document.pop("execution_time")
    document["output"] = re.sub(r"captionkit-sandbox(-\d+)?", "captionkit-sandbox", document["output"])
    return document


def assert_same_results(out: Path, expected: Path) -> None:
    ids = sorted(p.parent.name for p in expected.glob("*/results.json"))
    assert ids == ["ada", "ben", "cy", "dee"]
    assert sorted(p.parent.name for p in out.glob("*/results.json")) == ids
    for i in ids:
        assert comparable(out / i / "results.json") == comparable(expected / i / "results.json"), i
    assert (out / "grades.csv").read_text() == (expected / "grades.csv").read_text()


def cli_batch(klass: Path, out: Path, address: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "autograder", "batch", str(klass), "--out", str(out), "--scheduler", address],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_a_cluster_grades_like_a_local_batch(cluster, klass, local, tmp_path):
    address, _ = cluster
    run = cli_batch(klass, tmp_path / "out", address)
    output, _ = run.communicate(timeout=900)
    assert run.returncode == 0, output
    assert "graded 3 of 4 submissions" in output, output
    assert_same_results(tmp_path / "out", local)
    cy = json.loads((tmp_path / "out" / "cy" / "results.json").read_text())
    assert any("decoding.py is a symbolic link" in t["output"] for t in cy["tests"])  # the link travelled as one


def _grading(worker: subprocess.Popen) -> bool:
    """The dask worker is in the middle of a grade: it has started a sandbox worker of its own."""
    threads = Path(f"/proc/{worker.pid}/task").glob("*/children")  # a child is listed under the thread that made it
    return any(t.read_text().strip() for t in threads)


def test_a_worker_killed_mid_run_loses_no_submission_and_a_rerun_resumes(cluster, klass, local, tmp_path):
    address, workers = cluster
    out = tmp_path / "out"
    run = cli_batch(klass, out, address)
    deadline, victim = time.monotonic() + 600, None
    while victim is None and run.poll() is None and time.monotonic() < deadline:
        victim = next((w for w in workers if _grading(w)), None)
        time.sleep(0.05)
    assert victim is not None, "no worker was seen grading"
    victim.kill()
    victim.wait(timeout=30)
    output, _ = run.communicate(timeout=900)
    assert run.returncode == 0, output
    assert "graded 3 of 4 submissions" in output, output
    assert_same_results(out, local)  # the killed worker's submission was graded again on the other one

    before = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    os.remove(out / "ben" / "results.json")
    rerun = cli_batch(klass, out, address)
    output, _ = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, output
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    assert {i for i in after if after[i] != before[i]} == {"ben"}, "the rerun regraded more than the missing one"
    assert_same_results(out, local)
