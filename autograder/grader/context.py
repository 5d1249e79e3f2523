"""What the grading process knows and students do not: the hidden data seed, the hidden data set, and
the reference's training time measured in this run (the base of every training time budget)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import time
import traceback
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import torch

from autograder.public import limits
from autograder.worker.lazy_dynamo import defer_dynamo_import, has_real_dynamo, import_real
from shared.encoder import CaptionData, Split, load_data
from shared.encoder import cache_dir as encoder_cache_dir

HIDDEN = Path(__file__).resolve().parent / "hidden"


def hidden_seed() -> int:
    """The training seed of the hidden data: $CAPTIONKIT_HIDDEN_SEED, else autograder/grader/hidden/seed.json."""
    if "CAPTIONKIT_HIDDEN_SEED" in os.environ:
        return int(os.environ["CAPTIONKIT_HIDDEN_SEED"])
    return int(json.loads((HIDDEN / "seed.json").read_text())["seed"])


TEST_SECRET_BITS = 128


def hidden_test_secret(text: str | None = None) -> int:
    """The seed of the hidden test split, a secret of its own (128 bits, hex): $CAPTIONKIT_HIDDEN_TEST_SECRET,
    else "test_secret" in autograder/grader/hidden/seed.json. Independent of the training seed: the training data is
    given to student code by design, and a small seed behind it can be found by search; the test split's captions
    must not follow from it. `text`, when given, is read instead (hex)."""
    text = (
        text
        or os.environ.get("CAPTIONKIT_HIDDEN_TEST_SECRET")
        or json.loads((HIDDEN / "seed.json").read_text())["test_secret"]
    )
    try:
        secret = int(text, 16)
    except ValueError:
        secret = -1
    if secret < 0 or secret.bit_length() > TEST_SECRET_BITS or len(text) != TEST_SECRET_BITS // 4:
        raise ValueError(f"the hidden test secret: expected {TEST_SECRET_BITS // 4} hex digits, got {len(text)}")
    return secret


def retrieval_seed(test_secret: int) -> int:
    """The seed of the hidden retrieval split (128 bits), derived from the test secret: its scenes are neither the
    test split's (whose captions must never reach a worker) nor predictable without the secret."""
    digest = hashlib.sha256(f"{test_secret:x}:retrieval".encode()).digest()
    return int.from_bytes(digest[: TEST_SECRET_BITS // 8], "big")


def new_test_secret() -> str:
    """A fresh hidden test secret (hex)."""
    return secrets.token_hex(TEST_SECRET_BITS // 8)


class GradingContext:
    """Shared by every check of one grading run."""

    def __init__(
        self, scratch: Path, shared: Path | None = None, seed: int | None = None, test_secret: str | None = None
    ):
        self.scratch = Path(scratch)  # the grader's own folder: nobody else reads it
        self.scratch.mkdir(parents=True, exist_ok=True)
        os.chmod(self.scratch, 0o700)
        self.shared = Path(shared) if shared is not None else self.scratch / "shared"  # inputs for workers
        self.shared.mkdir(parents=True, exist_ok=True)
        os.chmod(self.shared, 0o711)  # workers open the files they are told of; nobody lists the folder
        self.seed = hidden_seed() if seed is None else seed
        self.test_secret = hidden_test_secret(test_secret)  # test_secret (hex): another course's (secret-sweep)
        self._reference_seconds: dict[str, float] = {}
        self._import_seconds: float | None = None  # torch._dynamo's import, timed once (time_optimizer_import)
        self._files: dict[str, Path] = {}
        self._artifacts: dict[str, dict] = {}  # part -> what its checks kept for the feedback report
        self._replies: dict[str, object] = {}  # what a check's worker returned, for later checks (keep_reply)

    @cached_property
    def data(self) -> CaptionData:
        """The hidden data set: 6000 training scenes from the hidden seed, 400 test scenes from the hidden test
        secret and 400 retrieval scenes from a seed derived from it (retrieval_seed) (encoder outputs cached in a
        folder only this user may read: the cache's name is a hash of a key holding the secrets, and its content
        holds the hidden test split's encodings)."""
        cache = encoder_cache_dir()
        cache.mkdir(parents=True, exist_ok=True)
        if cache.stat().st_uid == os.geteuid():
            os.chmod(cache, 0o700)
        data = load_data(
            train_seed=self.seed,
            test_seed=self.test_secret,
            retrieval_seed=retrieval_seed(self.test_secret),
            cache=True,
        )
        if data.cache_file is not None and data.cache_file.stat().st_uid == os.geteuid():
            os.chmod(data.cache_file, 0o600)
        return data

    @property
    def retrieval_split(self) -> Split:
        """The scenes a trained model's retrieval is graded on: the hidden retrieval split, never the test split
        (the test captions decide the exact-match checks: a worker holding them could return them)."""
        return self.data.retrieval

    def _shared_path(self, key: str) -> Path:
        """A random, unguessable file name in shared/ for `key` (names can carry information: the encoder
        cache's name is a hash of its seeds)."""
        if key not in self._files:
            self._files[key] = self.shared / f"{secrets.token_hex(16)}.pt"
        return self._files[key]

    def share(self, name: str, make: Callable[[], dict]) -> str:
        """Write `make()` (plain data) once to shared/ for a worker to load; return the path.
        Only inputs go there, never references or expected outputs."""
        path = self._shared_path(name)
        if not path.exists():
            torch.save(make(), path)
            os.chmod(path, 0o644)
        return str(path)

    def share_file(self, source: Path) -> str:
        """A world-readable copy of `source` in shared/ (once per run); return its path."""
        path = self._shared_path(str(source))
        if not path.exists():
            shutil.copyfile(source, path)
            os.chmod(path, 0o644)
        return str(path)

    def budget(
        self,
        key: str,
        reference_run: Callable[..., object],
        scale: float = 1.0,
        setup: Callable[[], object] | None = None,
    ) -> float:
        """The time limit (seconds) for a student's training run: LIMITS.budget_factor x the reference's projected
        time plus LIMITS.budget_allowance (autograder.public.limits). `reference_run` trains the reference on a slice
        of the same run, timed once per grading run in a forked copy of this process, plus the seconds of the
        optimizers' first-use import (time_optimizer_import); `scale` projects both to the whole run (say 12 for one
        epoch of twelve). `setup`, if given, prepares the reference's inputs outside the clock and is passed to
        `reference_run`. Timed only when a run needs it (autograder.grader.training.run_within_budget): never while
        a student's process is alive."""
        if key not in self._reference_seconds:
            self.data  # noqa: B018 (the property loads it, or reads the cache, before the clock starts)
            import_seconds = self.time_optimizer_import()
            self._reference_seconds[key] = (_timed_in_child(reference_run, setup) + import_seconds) * scale
        return limits.LIMITS.budget_factor * self._reference_seconds[key] + limits.LIMITS.budget_allowance

    def knows_budget(self, key: str) -> bool:
        """Whether the reference behind budget `key` has been timed in this grading run."""
        return key in self._reference_seconds

    def least_budget(self, scale: float = 1.0) -> float:
        """A lower bound of every budget of `scale` (budget() with the reference's own training time at zero): a run
        that ends within it ends within its budget, whatever the reference would have measured. Needs only the
        import's seconds (time_optimizer_import), about a second, where timing a reference costs a training epoch."""
        return limits.LIMITS.budget_factor * self.time_optimizer_import() * scale + limits.LIMITS.budget_allowance

    def time_optimizer_import(self) -> float:
        """Seconds of torch._dynamo's import (every torch optimizer imports it on first use in a plain process: 2.5
        CPU s, benchmarks/RESULTS.md), timed once per grading run in a forked child (import_optimizer_machinery).

        Every budget counts that import in each run, as if the reference's run had paid it, while the timed runs
        forked from here train with the workers' stand-in for the module: the grade pays one import, not one per
        trained part."""
        if self._import_seconds is None:
            self._import_seconds = import_optimizer_machinery()
        return self._import_seconds

    @property
    def reference_seconds(self) -> dict[str, float]:
        return dict(self._reference_seconds)

    def keep(self, part: str, key: str, value) -> None:
        """Keep `value` (plain data: numbers, strings, lists, dicts, tensors) for the feedback report of this run,
        under `part` and `key` (autograder/grader/report). Checks keep what the student's own run returned; a report
        shows only what is safe to show (docs/grader.md, "Feedback reports")."""
        self._artifacts.setdefault(part, {})[key] = value

    def take_artifacts(self) -> dict[str, dict]:
        """What the checks kept since the last call, by part; starts afresh (engine.grade calls it once per run,
        and with it forgets the replies kept by keep_reply: nothing of one submission reaches the next's checks)."""
        taken, self._artifacts, self._replies = self._artifacts, {}, {}
        return taken

    def keep_reply(self, key: str, value) -> None:
        """Keep what a check's recipe returned (or None) under `key` for a later check of the same grading run that
        grades more of it (a training check's run feeds its reply checks, autograder/grader/training/). Never
        shown: it holds what the student's code returned, validated by the check that reads it."""
        self._replies[key] = value

    def kept_reply(self, key: str):
        """What keep_reply kept under `key` in this grading run, or None."""
        return self._replies.get(key)


class PublicContext(GradingContext):
    """The public data for the kit's `python -m autograder check --train` (autograder.public.training): the scenes
    students train on at home (shared.encoder.load_data's defaults: training scenes of seed 0, test scenes of seed 1),
    on which the reference is timed for the runs' budgets as a grade times it on the hidden data."""

    def __init__(self, scratch: Path, shared: Path | None = None):
        super().__init__(scratch, shared, seed=0)

    @cached_property
    def data(self) -> CaptionData:
        """The public data set: 6000 training scenes of seed 0, 400 test scenes of seed 1."""
        return load_data(cache=True)


def import_optimizer_machinery() -> float:
    """The wall seconds torch._dynamo's real import takes (every torch optimizer imports it on first use in a plain
    process), measured in a forked child that exits with it: its 73 MB are not kept beside the timing runs. Then this
    process takes the stand-in every worker has (autograder.worker.lazy_dynamo), if it has none yet, so the runs
    forked from it train as a student's worker does. 0 when this process has the real module already (a run forked
    from it would not pay the import either)."""
    if has_real_dynamo():
        return 0.0
    seconds = _timed_in_child(import_real)
    defer_dynamo_import()
    return seconds


def _timed_in_child(run: Callable[..., object], setup: Callable[[], object] | None = None) -> float:
    """Wall seconds of `run()` (or `run(setup())`, setup untimed), run in a forked copy of this (trusted)
    process.

    Wall time, like the limit it sets: on a busy machine both stretch alike. In a child because a training
    run leaves this process's heap larger than it found it (freed activations the allocator keeps), and
    the grader stays alive while the student's worker trains beside it: the child's memory is returned
    whole when it exits, which keeps a full grade inside a small container's memory."""

    def timed() -> bytes:
        args = () if setup is None else (setup(),)
        t0 = time.perf_counter()
        run(*args)
        return repr(time.perf_counter() - t0).encode()

    status, reply = _in_forked_child(timed)
    if status != 0 or not reply:
        raise RuntimeError(f"the timing run failed (wait status {status})")
    return float(reply)


def _in_forked_child(work: Callable[[], bytes]) -> tuple[int, bytes]:
    """(wait status, bytes) of `work()` run in a forked copy of this (trusted) process, which leaves without
    running any of this process's exit handlers; an exception there is printed (the grader's own error, for
    staff) and gives a non-zero status and no bytes."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            os.write(write_end, work())
            status = 0
        except BaseException:  # noqa: BLE001 (reported: the caller sees the status)
            traceback.print_exc()
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as f:
        reply = f.read()
    _, status = os.waitpid(pid, 0)
    return status, reply
