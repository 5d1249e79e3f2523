"""What a run of checks is scored by and produces: a check's rubric Entry (its points, visibility and number), each
check's CheckResult (its score and what the student and the staff see), and the run's GradeReport.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    """What a check is worth and who sees its details: one entry of the rubric."""

    points: float
    visibility: str  # "public" or "hidden"
    number: int  # its position among the part's checks in the full rubric, from 1: check 3.2 is bleu's second


@dataclass
class CheckResult:
    part: str
    name: str
    number: str
    description: str
    score: float
    max_score: float
    visibility: str  # "public" or "hidden"
    output: str  # what the student may see
    seconds: float
    staff_note: str = ""  # details for TAs only (never in student-visible fields): the case, the traceback
    todo: str = ""  # "TODO ngram_counts (bleu.py:113)": the check stopped at a stub's unwritten TODO
    # A public check the grader also ran on its own cases: what its public round alone showed ("passed" or the
    # failure's output), i.e. what a student's `check` shows for the same module; "" for every other check.
    public_round: str = ""

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass
class GradeReport:
    results: list[CheckResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # part -> {key: plain data} the checks kept with ctx.keep (figures of the student's own trained models, for
    # autograder/grader/report); never in results.json
    artifacts: dict[str, dict] = field(default_factory=dict)
    # part -> the points of the part in the full grade, when this run graded only some of its checks (the public
    # ones): what the totals are out of once the hidden and training checks are graded too
    full_points: dict[str, float] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.results)

    def part_totals(self) -> dict[str, tuple[float, float]]:
        totals = {}
        for r in self.results:
            got, out_of = totals.get(r.part, (0.0, 0.0))
            totals[r.part] = (got + r.score, out_of + r.max_score)
        return totals
