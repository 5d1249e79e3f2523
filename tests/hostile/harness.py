"""What every hostile-submission test shares: building a submission from its data folder, grading it, and the
checks every row of the catalogue must pass whatever the attack (docs/security.md):

- grading finishes within a bound;
- no live process of the sandbox user is left once grade() returns;
- a few key files of the kit are unchanged;
- nothing hidden reaches what students see: not the hidden seed, not a line of a reference solution, and a
  hidden check shows only its property, the exception's type or a fixed sentence of the grader.

A submission is a folder under submissions/<ID>_<name>/. A module there whose first line reads
`# hostile: appended to solutions/<part>.py` (or `assignments/<part>.py`) is that file with the module's
text appended, so each file holds only the hostile code. `@@NAME@@` in a file is replaced by a value the test
gives (a folder made for the test, the kit's root, ...). `<name>.symlink` becomes a symbolic link `<name>` to
the kit's file named inside it. `<name>.hostile` becomes `<name>`: files that would act where they lie (a
conftest.py that pytest would load while collecting this folder, a torch.py shadowing torch) stay inert in
the kit and take their real names only in the submission folder.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grader.context import hidden_seed
from autograder.grader.engine import CheckResult, GradeOptions, GradeReport, grade
from autograder.grader.isolation import detect
from autograder.grader.results import gradescope_results

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
DIRECTIVE = re.compile(r"#\s*hostile:\s*appended to (solutions|assignments)/(\w+)\.py")
# Lines that only mark where a reference's solution code starts and ends (the stubs are generated from them).
MARKER_LINE = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.MULTILINE)
# Files an attack could damage, whose content is compared before and after every grade (files that rarely
# change, so that an edit made in the kit while the suite runs is not taken for an attack), and the folders
# searched for any file the sandbox user owns (it may create or own nothing in the kit).
KEY_FILES = (
    "autograder/grader/hidden/seed.json",
    "autograder/grader/rubric.schema.json",
    "autograder/worker/protocol.py",
    "autograder/public/staging.py",
    "solutions/__init__.py",
    "shared/vocab.py",
)
KIT_FOLDERS = ("autograder", "solutions", "shared", "assignments", "instructor", "tests", "docs")
# The environment a worker starts with (autograder.public.client.Worker._environment).
WORKER_ENVIRONMENT = {
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "CUDA_VISIBLE_DEVICES",
}


# -- building submissions --------------------------------------------------------------------------------

# Helpers a probe splices in at `# @@RUNTIME_NAMES@@` (its docstring says why).
RUNTIME_NAMES = (Path(__file__).with_name("runtime_names.py")).read_text().split('"""', 2)[2].lstrip("\n")


def build(row: str, dest: Path, *, also: tuple[str, ...] = (), **fill) -> Path:
    """The submission of catalogue row `row` in `dest`, plus the reference modules of the parts in `also`
    (the other parts a test grades to show they are unaffected). `fill` replaces @@NAME@@ placeholders."""
    source = SUBMISSIONS / row
    if not source.is_dir():
        raise FileNotFoundError(f"no submission folder {source}")
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = path.relative_to(source)
        text = path.read_text().replace("# @@RUNTIME_NAMES@@", RUNTIME_NAMES)
        for key, value in fill.items():
            text = text.replace(f"@@{key}@@", str(value))
        leftover = re.search(r"@@\w+@@", text)
        if leftover:
            raise ValueError(f"{path}: no value given for {leftover.group()}")
        target = dest / rel
        if target.suffix == ".hostile":
            target = target.with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".symlink":
            os.symlink(ROOT / text.strip(), target.with_suffix(""))
            continue
        directive = DIRECTIVE.match(text)
        if directive:
            base = (ROOT / directive[1] / f"{directive[2]}.py").read_text()
            text = MARKER_LINE.sub("", base).rstrip("\n") + "\n\n\n" + text
        target.write_text(text)
    for part in also:
        shutil.copyfile(ROOT / "solutions" / f"{part}.py", dest / f"{part}.py")
    return dest


def private_dir(parent: Path) -> Path:
    """A folder only root may enter (mode 700), with a sentinel file and an empty results/ folder."""
    path = Path(parent)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    (path / "sentinel.txt").write_text("sentinel")
    (path / "results").mkdir(exist_ok=True)
    return path


def drop_dir(parent: Path) -> Path:
    """A folder of the sandbox user's own (mode 700; 1777 without one), inside one it may pass through: where a test
    lets an attack leave evidence of what it managed to do after grading. Not world-writable, so the sweep leaves
    it; the worker's Landlock rules allow it only where the grader's environment names it (CAPTIONKIT_WORKER_DROP)."""
    os.chmod(parent, 0o711)
    path = Path(parent) / "drop"
    path.mkdir()
    isolation = detect()
    if isolation.uid is None:
        os.chmod(path, 0o1777)
    else:
        os.chown(path, isolation.uid, isolation.gid)
        os.chmod(path, 0o700)
    return path


# -- grading ---------------------------------------------------------------------------------------------


@dataclass
class Graded:
    report: GradeReport
    seconds: float
    folder: Path
    live_after: list[int] = field(default_factory=list)  # sandbox-user processes alive after grade()
    changed: list[str] = field(default_factory=list)  # key files of the kit that changed, and files
    # of the kit the sandbox user owns

    def results(self, part: str | None = None) -> list[CheckResult]:
        return [r for r in self.report.results if part is None or r.part == part]

    def result(self, name: str) -> CheckResult:
        (found,) = [r for r in self.report.results if r.name == name]
        return found

    def total(self, part: str) -> tuple[float, float]:
        return self.report.part_totals()[part]

    def full_marks(self, part: str) -> bool:
        got, out_of = self.total(part)
        return got == out_of

    def probe(self, name: str) -> dict:
        """The JSON a submission put after "PROBE" in the exception it raised in check `name`."""
        output = self.result(name).output
        start = output.find("PROBE")
        assert start >= 0, f"{name}: no probe in {output[:500]!r}"
        value, _ = json.JSONDecoder().raw_decode(output, start + len("PROBE"))
        return value

    def describe(self) -> str:
        return "\n".join(
            f"  {r.part}/{r.name}: {r.score:g}/{r.max_score:g} {r.output[:300]!r}" for r in self.report.results
        )


def run_grade(
    folder: Path,
    parts: tuple[str, ...],
    *,
    public_only: bool = True,
    training: str = "with",
    grader_cases: bool = True,
    **kwargs,
) -> Graded:
    """grade() the submission (engine.GradeOptions of these parts and choices; kwargs go to grade), timing it and
    noting what it left behind."""
    before = snapshot()
    started = time.monotonic()
    options = GradeOptions(parts=parts, public_only=public_only, training=training, grader_cases=grader_cases)
    report = grade(folder, options, **kwargs)
    seconds = time.monotonic() - started
    graded = Graded(
        report, seconds, Path(folder), live_after=[p for p, state, _ in sandbox_processes() if state != "Z"]
    )
    after = snapshot()
    graded.changed = [name for name in KEY_FILES if before.get(name) != after.get(name)] + owned_in_kit()
    reap_orphans()
    return graded


def snapshot() -> dict[str, str]:
    return {
        name: hashlib.sha256((ROOT / name).read_bytes()).hexdigest() for name in KEY_FILES if (ROOT / name).exists()
    }


def owned_in_kit() -> list[str]:
    """Files and folders of the kit owned by the sandbox user (none should be: it can create nothing there)."""
    uid = sandbox_uid()
    if uid is None:
        return []
    found = []
    for folder in KIT_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(ROOT / folder):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                try:
                    if os.lstat(path).st_uid == uid:
                        found.append(os.path.relpath(path, ROOT))
                except OSError:
                    continue
    return found


# -- the sandbox user's processes --------------------------------------------------------------------------


def sandbox_uid() -> int | None:
    """The uid this process's grader runs workers as (None without the user switch). Only this uid is scanned:
    other graders on the machine hold other sandbox users (captionkit-sandbox-N) and run their own workers."""
    return detect().uid


def sandbox_processes(uid: int | None = None) -> list[tuple[int, str, int]]:
    """(pid, state, parent pid) of every process of the sandbox user."""
    uid = sandbox_uid() if uid is None else uid
    if uid is None:
        return []
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = dict(
                line.split(":", 1) for line in Path(f"/proc/{entry}/status").read_text().splitlines() if ":" in line
            )
        except OSError:
            continue
        if int(fields["Uid"].split()[0]) == uid:
            found.append((int(entry), fields["State"].split()[0], int(fields["PPid"])))
    return found


PR_SET_CHILD_SUBREAPER = 36


def set_subreaper(on: bool) -> bool:
    """Make this process adopt its orphaned descendants (Linux), so that processes the sweep kills after they
    left the worker (a setsid daemon, a fork bomb's children) are reaped here. Without it they are re-parented
    to PID 1, which in some containers never reaps them: they stay zombies of the sandbox user, counted against
    its process limit."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans() -> None:
    """Reap the sandbox user's zombies that were re-parented to this process (never the workers the grader
    still waits for: those are its own children, which it reaps itself before grade() returns)."""
    for pid, state, parent in sandbox_processes():
        if state == "Z" and parent == os.getpid():
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


# -- what students see -------------------------------------------------------------------------------------


def visible_texts(graded: Graded) -> list[str]:
    """Every field a student can see: each check's name, description and output, and results.json as a whole."""
    texts = [t for r in graded.report.results for t in (r.name, r.description, r.output)]
    return texts + [json.dumps(gradescope_results(graded.report))]


def reference_lines(submission: Path) -> set[str]:
    """Distinctive lines of the reference solutions: not in the stubs (given code and docstrings are public) and
    not in the submission itself (a student's own line may be shown back to them)."""
    public = set()
    for path in [*(ROOT / "assignments").glob("*.py"), *(p for p in Path(submission).rglob("*") if p.is_file())]:
        try:
            public.update(line.strip() for line in path.read_text().splitlines())
        except (UnicodeDecodeError, OSError):
            continue
    lines = set()
    for path in (ROOT / "solutions").glob("*.py"):
        lines.update(line.strip() for line in path.read_text().splitlines())
    return {line for line in lines - public if len(line) >= 30 and not line.startswith(("#", '"""', "def ", "class "))}


def hidden_output_allowed(r: CheckResult) -> bool:
    """A hidden check may show its property, that the student's code raised (not what: A58), or one of the grader's
    fixed sentences about the worker, and nothing drawn from its inputs or expected values."""
    patterns = (
        "passed",
        re.escape(f"failed: {r.description}") + r"( \([^\n]{0,300}\))?",
        r"your code raised (an exception|NotImplementedError \(an unwritten TODO\))",
        r"timed out after \d+ s",
        r"(not run: )?the (part|check|submission)'s time limit was reached",
        # How a worker ended, without the status, the signal or the memory figure its code chose (WorkerDied.shown).
        r"the worker was killed by (SIGKILL \(likely out of memory\)|a signal)",
        r"the worker exited \(the student's code ended the process\)",
        r"the worker used more memory than it may",
        r"the worker stopped answering",
        re.escape("the worker ended with the zygote it was forked from (killed by the student's code or for memory)"),
        r"the worker is not running",
        r"sent an unreadable reply",
        r"sent a malformed reply",
        r"the worker sent a malformed start-up message",
        r"the worker did not start( in time| \([^\n]*\))",
        re.escape(f"{r.part}.py") + r" (could not be imported(: [\s\S]*)?|is missing from the submission|is a "
        r"symbolic link; submit the file itself|is not a regular file|"
        r"is \d+ bytes; the limit is \d+)",
        re.escape("the grader could not run this check (an error on the grader's side; tell the course staff)"),
    )
    return any(re.fullmatch(p, r.output) for p in patterns)


def leaks(graded: Graded) -> list[str]:
    """What a student could see that they must not: the hidden seed, reference lines, hidden check details."""
    problems = []
    texts = visible_texts(graded)
    seed = re.compile(rf"(?<![\d.]){hidden_seed()}(?!\d)")
    problems += [f"the hidden seed in {t[:200]!r}" for t in texts if seed.search(t)]
    everything = "\n".join(texts)
    problems += [f"a reference line: {line!r}" for line in reference_lines(graded.folder) if line in everything]
    problems += [
        f"hidden check {r.part}/{r.name} shows {r.output[:300]!r}"
        for r in graded.results()
        if r.visibility == "hidden" and not hidden_output_allowed(r)
    ]
    return problems


def assert_contained(graded: Graded, *, within: float) -> None:
    """The properties every row keeps, whatever the attack."""
    assert graded.seconds <= within, f"grading took {graded.seconds:.1f} s (bound {within:g} s)"
    assert not graded.live_after, f"sandbox processes alive after grading: {graded.live_after}"
    assert not graded.changed, f"files of the kit changed during grading: {graded.changed}"
    found = leaks(graded)
    assert not found, "\n".join(found)
