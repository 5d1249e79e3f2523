"""What a worker keeps on disk, counted without following its links, and how its folders are emptied and
removed."""

from __future__ import annotations

import collections
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from autograder.public import limits as time_limits
from autograder.public.client.errors import FolderTooDeep

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW  # a folder opened to be read, never through a link

MEMORY_TEMP_DIRS = ("/dev/shm",)  # temporary folders whose files take memory, not disk
# The machine's folders every user may write to (autograder.grader.sandbox.sweep empties them of the sandbox user's).
TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")


def count_files(
    roots: list[tuple[str, bool]], uid: int | None, since: int = 0, every_folder: bool = False
) -> tuple[int, int]:
    """(bytes, entries) of what lies beneath `roots` ((folder, count everything in it)) and is counted: everything
    where the flag is set, else what `uid` owns and changed (st_ctime, which no user can set back) at `since` (ns) or
    later; beneath a folder without the flag only `uid`'s folders are searched (every folder with `every_folder`).
    The worker chooses how deep its folders go and how long their names are: depth first, each folder opened
    relative to its parent (no path grows past PATH_MAX, no recursion), and FolderTooDeep for a folder of the
    worker's nested deeper than WORKER_FOLDER_DEPTH, so that no file can lie where this walk does not look."""
    used = files = 0
    for root, everything in roots:
        try:
            folder: int | None = os.open(root, _DIRECTORY)
        except OSError:
            continue
        frames: list[tuple[int, list[str]]] = []  # the open folders of the current path, each with what is left
        try:
            while True:
                if folder is not None:
                    below = []
                    for entry in _entries(folder):
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        owned = info.st_uid == uid
                        if everything or (owned and info.st_ctime_ns >= since):
                            used, files = used + info.st_blocks * 512, files + 1
                        if not stat.S_ISDIR(info.st_mode) or not (everything or owned or every_folder):
                            continue
                        if len(frames) + 1 < time_limits.WORKER_FOLDER_DEPTH:
                            below.append(entry.name)
                        elif everything or owned:
                            os.close(folder)
                            raise FolderTooDeep(
                                f"the worker's folders nest more than {time_limits.WORKER_FOLDER_DEPTH} levels deep"
                            )
                    frames.append((folder, below))
                parent, below = frames[-1]
                if below:
                    try:
                        folder = os.open(below.pop(), _DIRECTORY, dir_fd=parent)
                    except OSError:
                        folder = None
                    continue
                os.close(parent)
                frames.pop()
                if not frames:
                    break
                folder = None
        finally:
            for parent, _ in frames:
                os.close(parent)
    return used, files


# Folders one search for world-writable folders enters at most, beneath each root: bounded whatever other users keep in
# the temporary folders; breadth first, so shallow ones (/tmp/.X11-unix) are found first.
SEARCHED_FOLDERS = 20_000
# How long one such search is reused. The search walks every folder of another user that a sandbox user may enter (a
# /tmp holding a virtual environment or a test run's folders: thousands, about half a second), and a grade sweeps
# before every worker; a folder made since, directly in a temporary folder or in a writable one, is found at once
# (each call looks into those), one deeper in another user's folder at the next search. One walk of each root serves
# every sandbox user and every set of roots it is in (the sweep of a batch's 16 slots walked /tmp 16 times, 13.5 s on
# a /tmp of 12 GB; a grade's disk watch and its sweep, each with its own roots, walked /tmp twice).
SEARCH_REUSED_SECONDS = 300.0
_searches: dict[str, tuple[float, list[tuple[str, frozenset[int]]]]] = {}  # root -> (when, what its walk found)


def writable_folders(uid: int, roots: tuple[str, ...] | None = None) -> list[str]:
    """`roots` (default: the disk-backed TEMP_DIRS) and the folders beneath them that every user may write to (sticky
    /tmp-like ones, /tmp/.X11-unix, a test's drop folder), found by a walk through every folder of another user
    that user `uid` may enter (reused for SEARCH_REUSED_SECONDS), and by a look into each writable one every call:
    the places besides its own where its files can lie (disk_usage looks only there, and the grader's sweep empties
    them of its files)."""
    roots = tuple(roots if roots is not None else (folder for folder in TEMP_DIRS if folder not in MEMORY_TEMP_DIRS))
    searched = [found for root in roots for found in _searched(root)]
    found = list(dict.fromkeys([*roots, *(folder for folder, owners in searched if uid not in owners)]))
    looked = [
        path
        for folder in found
        for path, info in _enterable_folders(folder)
        if info.st_uid != uid and info.st_mode & 0o002
    ]  # made since the walk, in a writable folder
    return list(dict.fromkeys([*found, *looked]))


def _searched(root: str) -> list[tuple[str, frozenset[int]]]:
    """What the walk beneath `root` found (_search_writable_by_owners), walked again once SEARCH_REUSED_SECONDS old."""
    searched_at, searched = _searches.get(root, (None, []))
    if searched_at is None or time.monotonic() - searched_at > SEARCH_REUSED_SECONDS:
        searched = _search_writable_by_owners((root,), SEARCHED_FOLDERS)
        _searches[root] = (time.monotonic(), searched)
    return searched


def _enterable_folders(folder: str) -> list[tuple[str, os.stat_result]]:
    """(path, stat) of each folder directly in `folder` that every user may enter (links not followed). Only folders
    are stat'ed: the listing's own entry types tell them from files (a walk through a /tmp holding virtual environments
    met ten files for each folder)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o001:
            found.append((entry.path, info))
    return found


def _search_writable_by_owners(roots: tuple[str, ...], folders: int) -> list[tuple[str, frozenset[int]]]:
    """(folder, the owners of it and of every folder between it and its root) of each folder beneath `roots` that
    every user may enter and write to, breadth first over at most `folders` folders that every user may enter. User
    u never enters its own folders (they are disk_usage's), so what the walk finds for u are the folders whose owners
    leave u out."""
    found = []
    queue: collections.deque[tuple[str, frozenset[int]]] = collections.deque((root, frozenset()) for root in roots)
    for _ in range(folders):
        if not queue:
            break
        folder, owners = queue.popleft()
        for path, info in _enterable_folders(folder):
            below = owners if info.st_uid in owners else owners | {info.st_uid}
            queue.append((path, below))
            if info.st_mode & 0o002:
                found.append((path, below))
    return found


def disk_usage(uid: int | None, own: Path, writable: Sequence[str] = (), since: int = 0) -> tuple[int, int]:
    """(bytes, files and folders) a worker keeps: everything in its folder `own` and, with a sandbox user `uid`,
    what that user owns in the `writable` folders (writable_folders) and beneath, changed at `since` (ns, the
    worker's start) or later: files an earlier worker of the user left are not this one's (without a user, files
    there cannot be told from the grader's). The memory-backed temporary folders are tree_memory's."""
    roots = [(str(own), True)] + [(folder, False) for folder in (writable if uid is not None else ())]
    return count_files(roots, uid, since)


@contextmanager
def passable_folder(prefix: str) -> Iterator[str]:
    """A fresh folder in the temporary folder that every user may pass through and none may list (0711), removed with
    everything in it (remove_tree) on the way out: the temporary folder of a process that may be killed before it
    removes its own folders (a grading process past its watchdog), its sandbox user's workers' folders beneath it."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        os.chmod(folder, 0o711)
        yield folder
    finally:
        remove_tree(folder)


def empty_folder(folder: Path) -> None:
    """`folder` as an empty folder: made if missing, else emptied (never followed through a link inside it)."""
    folder.mkdir(exist_ok=True)
    for entry in list(os.scandir(folder)):
        remove_tree(entry.path)


def remove_tree(path: str | os.PathLike) -> None:
    """Delete `path` and everything beneath it (a file or a link: just that), never following a link and never
    raising. A worker chooses how deep its folders go: shutil.rmtree recurses once a level before Python 3.12 (a
    RecursionError it does not catch), and a path thousands of levels long is past PATH_MAX. Here each folder met
    is first moved up into `path` under a fresh name, then emptied: no recursion, no path longer than two names, at
    most two folders open at once."""
    path = os.fspath(path)
    try:
        if not os.path.isdir(path) or os.path.islink(path):
            os.unlink(path)
            return
        top = os.open(path, _DIRECTORY)
    except OSError:
        return
    try:
        tag, moved = os.urandom(8).hex(), 0
        pending = [entry.name for entry in _entries(top) if _is_folder(entry)]
        for entry in _entries(top):
            if not _is_folder(entry):
                _unlink(entry.name, top)
        while pending:
            name = pending.pop()
            try:
                folder = os.open(name, _DIRECTORY, dir_fd=top)
            except OSError:
                continue
            try:
                for entry in _entries(folder):
                    if _is_folder(entry):
                        moved += 1
                        try:
                            os.rename(entry.name, f".rm-{tag}-{moved}", src_dir_fd=folder, dst_dir_fd=top)
                            pending.append(f".rm-{tag}-{moved}")
                        except OSError:
                            pass
                    else:
                        _unlink(entry.name, folder)
            finally:
                os.close(folder)
            try:
                os.rmdir(name, dir_fd=top)
            except OSError:
                pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _entries(folder_fd: int) -> list[os.DirEntry]:
    try:
        with os.scandir(folder_fd) as entries:
            return list(entries)
    except OSError:
        return []


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _unlink(name: str, folder_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=folder_fd)
    except OSError:
        pass
