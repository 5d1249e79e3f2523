"""Where a grading run is, for the person waiting on it: `engine.grade` reports each part, each check and each
training epoch to a Progress.

    Progress    shows nothing: the library default, `--json` runs and CI (the environment variable CI is set)
    Bar         on a terminal: one tqdm bar over the run's checks, "[5/7] Part 6 lstm_a" and the running
                check, with the epoch and loss of a training check (reported by the worker between epochs)
    Lines       elsewhere (a log file, a pipe): one line per finished part

Progress goes to stderr; stdout keeps the results table. It never changes a grade.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from shared.parts import BY_MODULE


class Progress:
    """What a grading run reports while it runs (engine.grade calls these in order); this base shows nothing."""

    def begin(self, checks: int, unit: str = "check") -> None:
        """The run will grade `checks` checks in all (`unit`: what it counts, e.g. "training run")."""

    def step(self, text: str) -> None:
        """Work outside any check has started (e.g. timing the optimizers' first-use import)."""

    def part(self, index: int, count: int, module: str, checks: int) -> None:
        """Part `module`, the index-th (from 1) of the `count` parts this run grades, has started, or its second phase
        has (a grade runs every part's public checks first, then every part's others); it has `checks` checks to grade
        in this phase."""

    def check(self, number: str, name: str, training: bool) -> None:
        """Check `number` (e.g. "6.9") has started."""

    def epoch(self, epoch: int, epochs: int, loss: float) -> None:
        """The running training check's model finished epoch `epoch` of `epochs` with this mean loss."""

    def check_done(self) -> None:
        """The running check has its verdict."""

    def part_done(self, got: float, out_of: float) -> None:
        """The running part is graded: `got` of `out_of` points."""

    def run_done(self, outcome: str) -> None:
        """The running part's training run (`check --train`) is over, `outcome` saying how in words: a run earns no
        points, so none are shown."""

    def end(self) -> None:
        """The run is over (also after an error)."""


def _label(index: int, count: int, module: str) -> str:
    return f"[{index}/{count}] Part {BY_MODULE[module].number} {module}"


class Lines(Progress):
    """One line per finished part: "[7/7] Part 3 bleu: 15 / 15 (12 s)", or for a training run "[1/1] Part 1
    show_and_tell: reached the threshold at epoch 5 of 12 (15 s)"."""

    def __init__(self, stream: TextIO, prefix: str = ""):
        self.stream, self.prefix = stream, prefix
        self.label, self.started = "", 0.0
        self.spent: dict[str, float] = {}  # seconds of a part's earlier phases (a grade runs each part in two)

    def part(self, index: int, count: int, module: str, checks: int) -> None:
        now = time.monotonic()
        if self.label:
            self.spent[self.label] = self.spent.get(self.label, 0.0) + now - self.started
        self.label, self.started = _label(index, count, module), now

    def part_done(self, got: float, out_of: float) -> None:
        self._line(f"{got:g} / {out_of:g}")

    def run_done(self, outcome: str) -> None:
        self._line(outcome)

    def _line(self, text: str) -> None:
        seconds = self.spent.get(self.label, 0.0) + time.monotonic() - self.started
        print(f"{self.prefix}{self.label}: {text} ({seconds:.0f} s)", file=self.stream, flush=True)


class Bar(Progress):
    """A tqdm bar over the run's checks; its description names the part, its postfix the running check and the
    training epoch and loss."""

    def __init__(self, stream: TextIO, prefix: str = "", position: int | None = None):
        self.stream, self.prefix, self.position = stream, prefix, position
        self.bar = None
        self.running = ""
        self.part_end = 0  # the bar's count once the running part is over (a part that cannot start runs none)
        self.last_epoch = 0  # the running check's latest epoch
        self.again = False  # its training started over (stopped at the least budget, run again with its own)

    def begin(self, checks: int, unit: str = "check") -> None:
        from tqdm import tqdm

        self.bar = tqdm(
            total=checks,
            file=self.stream,
            unit=unit,
            position=self.position,
            leave=self.position is None,
            dynamic_ncols=True,
            bar_format="{desc} {bar:12} {n_fmt}/{total_fmt} " + unit + "s [{elapsed}]{postfix}",
        )
        self.bar.set_description_str(self.prefix + "starting")

    def step(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text)

    def part(self, index: int, count: int, module: str, checks: int) -> None:
        if self.bar is not None:
            if self.bar.n < self.part_end:  # the checks the phase before did not run (a module that cannot start)
                self.bar.update(self.part_end - self.bar.n)
            self.part_end = self.bar.n + checks
            self.bar.set_description_str(self.prefix + _label(index, count, module))

    def check(self, number: str, name: str, training: bool) -> None:
        self.running = f"{number} {name}" + (" (training)" if training else "")
        self.last_epoch, self.again = 0, False
        if self.bar is not None:
            self.bar.set_postfix_str(self.running)

    def epoch(self, epoch: int, epochs: int, loss: float) -> None:
        # A run still going at its least budget is stopped and trained again from epoch 1 with its full budget
        # (autograder.grader.training.run_within_budget): say so, or the bar seems to go backwards.
        self.again = self.again or epoch <= self.last_epoch
        self.last_epoch = epoch
        if self.bar is not None:
            again = " (again, with its full time budget)" if self.again else ""
            self.bar.set_postfix_str(f"{self.running}: epoch {epoch}/{epochs}{again}, loss {loss:.3f}")

    def check_done(self) -> None:
        if self.bar is not None:
            self.bar.update()

    def part_done(self, got: float, out_of: float) -> None:
        if self.bar is not None and self.bar.n < self.part_end:
            self.bar.update(self.part_end - self.bar.n)

    def run_done(self, outcome: str) -> None:
        self.part_done(0.0, 0.0)  # the bar shows no points: only its count moves

    def end(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def for_terminal(
    json_output: bool = False, stream: TextIO | None = None, prefix: str = "", position: int | None = None
) -> Progress:
    """The Progress a command shows on `stream` (default stderr): none when it writes JSON or runs in CI, a bar on
    a terminal, one line per part elsewhere."""
    stream = stream or sys.stderr
    if json_output or os.environ.get("CI"):
        return Progress()
    if stream.isatty():
        return Bar(stream, prefix, position)
    return Lines(stream, prefix)
