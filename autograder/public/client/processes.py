"""A worker's processes as /proc shows them: their start times, children, sessions and memory."""

from __future__ import annotations

import os

from autograder.public.client.disk import MEMORY_TEMP_DIRS, count_files


def _proportional_bytes(pid: int) -> int:
    """The process's proportional set size (shared pages divided among their users); where that is unreadable
    (another user's process needs CAP_SYS_PTRACE, which Docker's default set lacks), its resident memory less
    its shared file pages, which counts a forked child's copy-on-write pages once per process (an over-count)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        with open(f"/proc/{pid}/statm") as f:
            fields = f.read().split()
            return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _resident_bytes(pid: int) -> int:
    """The process's resident set size, read from /proc/PID/statm (readable for every process): at least its
    proportional set size and at least what _proportional_bytes falls back to."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (0: the state), or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _stat_field(pid: int, index: int) -> int | None:
    """Field `index` of /proc/PID/stat, counted from the one after the command name (0: the state)."""
    fields = _stat_fields(pid)
    try:
        return None if fields is None else int(fields[index])
    except (ValueError, IndexError):
        return None


def has_ended(pid: int) -> bool:
    """Process `pid` has ended (or is a zombie nobody will collect for us)."""
    fields = _stat_fields(pid)
    return not fields or fields[0] in ("Z", "X")


def _session_of(pid: int) -> int | None:
    return _stat_field(pid, 3)


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), None when there is none: with its pid, its identity."""
    return _stat_field(pid, 19)


def children_of(parent: int) -> list[int]:
    """The pids of the processes whose parent is `parent`."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _stat_field(int(p), 1) == parent]


def processes_of(uid: int) -> list[int]:
    """The pids of every process of user `uid` (read from /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                for line in f:
                    if line.startswith("Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except OSError:
            continue
    return pids


def tree_memory(leader: int, uid: int | None, exact: bool = True) -> int:
    """Bytes used by the worker's processes (every process of the sandbox user `uid`; without one, the worker's
    session led by `leader`) and by that user's files in memory-backed temporary folders. exact=False: an upper
    bound, cheap to read (resident instead of proportional set sizes; shared pages counted once per process)."""
    pids = (
        processes_of(uid)
        if uid is not None
        else [int(p) for p in os.listdir("/proc") if p.isdigit() and _session_of(int(p)) == leader]
    )
    total = sum((_proportional_bytes if exact else _resident_bytes)(pid) for pid in pids)
    if uid is not None:
        total += count_files([(folder, False) for folder in MEMORY_TEMP_DIRS], uid, every_folder=True)[0]
    return total
