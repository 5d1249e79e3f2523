"""Find the submissions in a batch and unpack them safely.

Accepted layouts of SUBMISSIONS:
  - Gradescope's "Export Submissions": folders `submission_<id>/` beside `submission_metadata.yml`
    (the submitters' names are read from it when it parses);
  - a plain folder of student folders, or of student zip files (`<name>.zip`), or both.
A zip is extracted with zipfile after every entry is vetted: no absolute paths, no `..`, no links or
devices, at most MAX_FILES entries and MAX_BYTES uncompressed. The modules may sit in a sub-folder.
"""

from __future__ import annotations

import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from shared.parts import MODULES

MAX_FILES = 200
MAX_BYTES = 20 * 1024 * 1024


class IntakeError(Exception):
    """A submission that cannot be unpacked; the message is one line."""


def describe_error(exc: BaseException) -> str:
    """Why reading a submission failed, in one line of at most 300 characters: an IntakeError's own message, else the
    error's kind and what it says (for a file system error, its reason without the grader's paths)."""
    if isinstance(exc, IntakeError):
        text = str(exc)
    elif isinstance(exc, OSError) and exc.strerror:
        text = f"{type(exc).__name__}: {exc.strerror}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return re.sub(r"[\x00-\x1f\x7f]", " ", text)[:300]


@dataclass(frozen=True)
class Submission:
    id: str  # a stable key: the folder or zip name
    name: str  # who submitted it, where known
    source: Path  # a folder or a .zip


def _gradescope_names(root: Path) -> dict[str, str]:
    meta = root / "submission_metadata.yml"
    if not meta.exists():
        return {}
    try:
        import yaml

        data = yaml.safe_load(meta.read_text()) or {}
    except Exception:  # noqa: BLE001 (names are a convenience; ids still identify every submission)
        return {}

    def plain(mapping):  # Gradescope writes Ruby symbols: ":submitters:" parses as the key ":submitters"
        return {str(k).strip(":"): v for k, v in mapping.items()} if isinstance(mapping, dict) else {}

    names = {}
    for key, entry in data.items():
        submitters = plain(entry).get("submitters") or []
        people = [str(plain(s).get("name") or "") for s in submitters]
        names[str(key)] = ", ".join(p for p in people if p)
    return names


def discover(root: Path) -> list[Submission]:
    """Every submission under `root`, sorted by id."""
    root = Path(root)
    if not root.is_dir():
        raise IntakeError(f"{root}: not a folder")
    names = _gradescope_names(root)
    found = []
    for entry in sorted(root.iterdir()):
        if entry.is_symlink() or entry.name.startswith("."):
            continue
        if entry.is_dir() or (entry.is_file() and entry.suffix == ".zip"):
            key = entry.stem if entry.suffix == ".zip" else entry.name
            found.append(Submission(key, names.get(key) or key, entry))  # a plain folder: its name
    return found


def _vet(info: zipfile.ZipInfo) -> PurePosixPath:
    path = PurePosixPath(info.filename)
    if path.is_absolute() or ".." in path.parts or info.filename.startswith(("/", "\\")) or "\\" in info.filename:
        raise IntakeError(f"unsafe path in the zip: {info.filename!r}")
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 when the zip records no file type
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise IntakeError(f"links and special files are not allowed in the zip: {info.filename!r}")
    return path


def extract_zip(archive: Path, target: Path) -> Path:
    """Extract `archive` into `target` after vetting every entry; return `target`."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_FILES:
                raise IntakeError(f"the zip holds {len(infos)} entries; the limit is {MAX_FILES}")
            if sum(i.file_size for i in infos) > MAX_BYTES:
                raise IntakeError(f"the zip unpacks to more than {MAX_BYTES // 2**20} MB")
            for info in infos:
                _vet(info)
            target.mkdir(parents=True, exist_ok=True)
            for info in infos:
                if not info.is_dir():
                    zf.extract(info, target)
    except zipfile.BadZipFile as exc:
        raise IntakeError(f"not a valid zip file: {exc}") from None
    return target


def module_folder(folder: Path, depth: int = 3) -> Path:
    """The folder holding the module files: `folder` itself or the shallowest sub-folder with any of them."""
    level = [Path(folder)]
    for _ in range(depth + 1):
        for candidate in level:
            if any((candidate / f"{m}.py").is_file() for m in MODULES):
                return candidate
        level = [
            d
            for c in level
            for d in sorted(c.iterdir())
            if d.is_dir() and not d.is_symlink() and d.name not in ("__MACOSX", "__pycache__")
        ]
    return Path(folder)


def unpack(submission: Submission, scratch: Path) -> Path:
    """A folder holding the submission's modules (zips extracted under `scratch`)."""
    if submission.source.is_dir():
        return module_folder(submission.source)
    return module_folder(extract_zip(submission.source, scratch / submission.id))
