"""The hostile suite measures the sandbox's own limits: it runs them unscaled (see tests/conftest.py)."""

import dataclasses
import multiprocessing.util
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.public import limits
from autograder.public.client import template
from autograder.public.client.disk import passable_folder


@pytest.fixture(autouse=True)
def unscaled_time_limits(monkeypatch):
    monkeypatch.setattr(limits, "LIMITS", dataclasses.replace(limits.LIMITS, scale=1.0))


# A grading command's clean start (autograder/grader/clean_start.py) as a program of its own: it imports torch, forks
# the template, and lends it to the test process through the socket it is given (the descriptor in argv[1]).
CLEAN_START = """
import socket, sys
import torch
from autograder.public.client import template
from autograder.public.client.zygote import worker_environment
template.prefork(worker_environment)
control, lent = template.current_template({}).lend()
channel = socket.socket(fileno=int(sys.argv[1]))
socket.send_fds(channel, [lent.encode()], [control.fileno()])
channel.recv(1)  # until the test process ends; then the template ends with this process
"""


@pytest.fixture(scope="package", autouse=True)
def forked_template():
    """Every grade of the suite forks its zygotes from a template forked as a grading command's clean start forks it
    (after `import torch`, from a process that holds nothing else: autograder/grader/clean_start.py), so that every
    hostile submission meets that path; a template that is lost, or whose runtime copy changed, is replaced by a fresh
    interpreter, as in a grade. Lent to the suite's tests only (ended after them), so that no other test meets it.
    What a worker can read of the grading command: tests/grader/test_clean_start.py."""
    from autograder.grader import clean_start
    from autograder.public.client import template
    from autograder.public.client.runtime import WORKER_PYTHON_FLAGS

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    kit = Path(__file__).resolve().parents[2]
    settings = {name: os.environ[name] for name in clean_start.WORKER_SETTINGS if name in os.environ}
    helper = subprocess.Popen(
        [sys.executable, *WORKER_PYTHON_FLAGS, "-c", CLEAN_START, str(theirs.fileno())],
        pass_fds=(theirs.fileno(),),
        env={**clean_start.ENVIRONMENT, **settings, "PYTHONPATH": str(kit)},
    )
    theirs.close()
    lent, fds, _, _ = socket.recv_fds(ours, 4096, 1)
    assert lent and len(fds) == 1, "the clean start lent no template"
    template.adopt(socket.socket(fileno=fds[0]), lent.decode())
    yield
    template.close_template()
    ours.close()
    helper.wait(timeout=30)


@pytest.fixture
def temporary_folder(monkeypatch):
    """A temporary folder of the test's own for a grade and the processes it starts ($TMPDIR and this process's
    tempfile), which the sandbox users may pass through as they do the machine's: what a stopped grade leaves in it
    can be seen. Removed afterwards with everything in it."""
    # This process's multiprocessing folder (a forkserver's socket), made once per process and removed when it exits:
    # made now, in the machine's temporary folder, it outlives neither this test's folder nor the process.
    multiprocessing.util.get_temp_dir()
    held = template._current  # the suite's (forked_template), which stays for the tests after this one
    with passable_folder("captionkit-test-tmp-") as folder:
        monkeypatch.setenv("TMPDIR", folder)
        monkeypatch.setattr(tempfile, "tempdir", None)
        yield Path(folder)
        if template._current is not held:
            template.close_template()  # one the test started here, in this folder
