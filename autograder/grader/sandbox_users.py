"""The sandbox users a worker runs as, when the grader runs as root: one per slot (SLOTS), created at install time
(`create_users`), each claimed by one grader at a time through a lock file (so that one grader's sweep never kills
another's worker), and swept when no grader holds it (`sweep_free_slots`).
"""

from __future__ import annotations

import fcntl
import os
import pwd
import subprocess
from pathlib import Path

from autograder.grader.sandbox import Sandbox, sweep

SANDBOX_USER = "captionkit-sandbox"
# Graders running at once (a TA's batch with --jobs N) each take their own sandbox user, so that one
# grader's sweep never kills another's worker. A slot is held by an flock for the grader's lifetime.
SLOTS = 16
LOCK_DIR = Path("/run/lock/captionkit") if Path("/run/lock").is_dir() else Path("/tmp/captionkit-locks")
_held_slot = None


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
