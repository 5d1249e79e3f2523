"""A grading command's clean start (autograder/grader/clean_start.py): its workers come from a template forked by the
grading process, and nothing of the command's arguments or environment reaches a worker's memory."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A submission's module that reads every page of its own process it can (/proc/self/mem, as any student's code may)
# and looks for each marker, given in two halves so that the whole marker exists nowhere but where the grader put it.
# A canary it builds itself shows that the scan finds what is there. Its findings reach the results as the import
# error's message.
PROBE = """
import os

HALVES = {HALVES}


def pages():
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    memory = os.open("/proc/self/mem", os.O_RDONLY)
    for region in regions:
        start, end = (int(x, 16) for x in region[0].split("-"))
        name = region[5] if len(region) > 5 else ""
        if "r" not in region[1] or name in ("[vvar]", "[vsyscall]", "[vvar_vclock]"):
            continue
        if name.startswith("/") and "w" not in region[1]:
            continue  # a file's read-only pages: the file's own text
        at = start
        while at < end:
            try:
                yield os.pread(memory, min(1 << 22, end - at) + 64, at)  # overlapping by 64 bytes
            except OSError:
                pass
            at += 1 << 22


canary = [HALVES["canary"][0] + HALVES["canary"][1]]
seen = dict.fromkeys(HALVES, 0)
for chunk in pages():
    for name, (first, second) in HALVES.items():
        at = chunk.find(first.encode())
        while at >= 0:
            if chunk[at + len(first) : at + len(first) + len(second)] == second.encode():
                seen[name] = 1
            at = chunk.find(first.encode(), at + 1)
cmdline = open("/proc/self/cmdline", "rb").read().split(b"\\0")
forked = int(b"-m" in cmdline and b"autograder" in cmdline)
first_environment = len(open("/proc/self/environ", "rb").read().replace(b"\\0", b""))  # bytes other than zeros
raise RuntimeError(
    "PROBE forked=%d environ=%d " % (forked, first_environment)
    + " ".join("%s=%d" % item for item in sorted(seen.items()))
)
"""


def _grade_probe(tmp_path: Path, program: list[str]) -> str:
    """Grade the probe with the command line `program` (its Part 3); the probe's findings."""
    markers = {name: secrets.token_hex(12) for name in ("canary", "environment", "argument", "path")}
    submission = tmp_path / "submission"
    submission.mkdir()
    halves = {name: (marker[:12], marker[12:]) for name, marker in markers.items()}
    (submission / "bleu.py").write_text(PROBE.replace("{HALVES}", repr(halves)))
    results = tmp_path / markers["argument"] / "results.json"  # the argument a worker is never given
    results.parent.mkdir()
    done = subprocess.run(
        [*program, str(submission), "--part", "bleu", "--json", str(results)],
        cwd=ROOT,
        env={
            **os.environ,
            "CAPTIONKIT_TEST_SECRET": markers["environment"],
            "PATH": f"/{markers['path']}:{os.environ.get('PATH', '/usr/bin:/bin')}",  # a variable Python reads
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    message = json.loads(results.read_text())["tests"][0]["output"]
    assert "PROBE" in message, message
    return message[message.index("PROBE") :].split("\n")[0]


@pytest.mark.caps
def test_a_graded_worker_comes_from_the_template_forked_at_the_clean_start_and_reads_nothing_of_the_command(tmp_path):
    findings = _grade_probe(tmp_path, [sys.executable, "-m", "autograder", "grade"])
    assert findings.startswith("PROBE forked=1 "), findings  # the workers descend from the grading command itself
    assert "canary=1" in findings, findings  # the scan finds what is in its memory
    assert "environment=0" in findings and "argument=0" in findings and "path=0" in findings, findings
    assert "environ=0 " in findings, findings  # the block /proc/self/environ shows was blanked


def test_the_second_start_gets_nothing_of_the_command_s_environment_or_arguments(monkeypatch):
    """What the template inherits beyond the kit's own values (the environment block and the command line of the
    second start): nothing the command was given, whatever it is."""
    from autograder.grader import clean_start

    marker = secrets.token_hex(12)
    executed = []
    monkeypatch.setattr(os, "execve", lambda path, argv, env: executed.append((argv, env)))
    for name in ("PATH", "LANG", "LC_ALL", "TMPDIR", "HOME", "CAPTIONKIT_TEST_SECRET"):
        monkeypatch.setenv(name, f"/{marker}")
    monkeypatch.setattr(sys, "argv", [sys.argv[0], "grade", f"/{marker}"])
    clean_start.start(grading=True)
    [(argv, env)] = executed
    os.close(int(env[clean_start.STATE]))  # the anonymous file, which the second start would have read
    assert marker not in repr(argv) + repr(env), (argv, env)
    assert set(env) == {*clean_start.ENVIRONMENT, "PYTHONPATH", clean_start.STATE}, env
