"""The plain-text table `check` and `grade` print (`table`): each part's total, one line per check with each
failure's output under it, and what a run of the public checks alone covers of the grade; and the grouping of one
part's results into those lines (`check_groups`), which the HTML feedback report shares.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.public.grade_report import CheckResult, GradeReport
from shared.parts import PARTS, TODO_MESSAGE


def table(report: GradeReport, show_checks: bool = True) -> str:
    """A plain-text table: the total of each part and (optional) one line per check, with each failure's output
    under it; an unwritten TODO is one line however many checks wait for it, and so is a part whose every check
    failed for one reason (a missing module, one that cannot be imported). When the run graded only some of the
    checks (report.full_points), it says what the grade is out of and what the rest of it comes from."""
    lines = []
    totals = report.part_totals()
    for p in PARTS:
        if p.module not in totals:
            continue
        got, out_of = totals[p.module]
        full = report.full_points.get(p.module)
        lines.append(
            f"Part {p.number} {p.module:14s} {got:6.1f} / {out_of:5.1f}"
            + (f"   of {full:g} in the grade" if full is not None and full > out_of else "")
        )
        if show_checks:
            lines += _check_lines([r for r in report.results if r.part == p.module], weigh=bool(report.full_points))
    lines.append(f"{'total':21s} {report.score:6.1f} / {report.max_score:5.1f}   ({report.seconds:.1f} s)")
    lines += _coverage(report)
    return "\n".join(lines)


@dataclass(frozen=True)
class Group:
    """Checks of one part shown as one line (check_groups): those that wait for one unwritten TODO (`todo`), or
    every check of the part when all failed with the same output (`todo` is "": a missing module, one that cannot
    be imported)."""

    results: tuple[CheckResult, ...]
    todo: str = ""

    @property
    def numbers(self) -> str:
        return ", ".join(r.number for r in self.results)

    @property
    def max_score(self) -> float:
        return sum(r.max_score for r in self.results)

    @property
    def line(self) -> str:
        """A TODO's line: "TODO corpus_bleu (bleu.py:181): 5 checks wait for it (3.3, 3.4, 3.5, 3.9, 3.10: 6
        points)"."""
        n = len(self.results)
        return (
            f"{self.todo}: {n} check{'s wait' if n > 1 else ' waits'} for it ({self.numbers}: "
            f"{self.max_score:g} point{'s' * (self.max_score != 1)})"
        )


def check_groups(results: list[CheckResult]) -> list[CheckResult | Group]:
    """One part's results as they are shown, in order (`table`, the HTML feedback report): a Group in place of
    the checks it stands for, at the first of them; every other check as it is.

    A part whose checks (more than one) all failed with the same output, none at a TODO, is one Group. Otherwise
    the checks waiting for an unwritten TODO are one Group per TODO, placed where the first of them was. A TODO
    is grouped only when a check's output already shows it (a public check's public round); a check whose output
    does not (a hidden check, the grader's own cases) joins that group, and is otherwise shown as it is: its
    TODO is read from a message its code raised, which a hidden check never shows."""
    if len(results) > 1 and not any(r.passed or r.todo for r in results) and len({r.output for r in results}) == 1:
        return [Group(tuple(results))]
    shown = {r.todo for r in results if r.todo and _shows_todo(r)}
    out: list[CheckResult | Group] = []
    for r in results:
        if r.todo not in shown:
            out.append(r)
        elif not any(isinstance(g, Group) and g.todo == r.todo for g in out):
            out.append(Group(tuple(w for w in results if w.todo == r.todo), r.todo))
    return out


def _shows_todo(r: CheckResult) -> bool:
    """Whether `r`'s output names the TODO it waits for ("... raised NotImplementedError: Part 3 (bleu): ...")."""
    match = TODO_MESSAGE.search(r.output)
    return match is not None and r.todo.split(" (")[0] == f"TODO {match.group('function')}"


def weighing_line(r: CheckResult) -> str:
    """What else of the grade runs the functions of a failed public check, from the public rubric's counts:
    "beam_search is also run by 3 hidden checks (5 points) and 0 training checks of the grade", or "" when the
    rubric does not say."""
    import json
    from pathlib import Path

    try:
        rubric = json.loads((Path(__file__).resolve().parent / "rubric.json").read_text())
        entry = rubric["parts"][r.part]["checks"][r.name]
        functions = ", ".join(entry["functions"])
        hidden, trained = int(entry["hidden_checks"]), int(entry["training_checks"])
        hidden_points, training_points = float(entry["hidden_points"]), float(entry["training_points"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not functions:
        return ""

    def counted(n: int, kind: str, points: float) -> str:
        return f"{n} {kind} check{'s' * (n != 1)}" + (f" worth {points:g} point{'s' * (points != 1)}" if n else "")

    return (
        f"the same function{'s' * (',' in functions)} ({functions}) {'are' if ',' in functions else 'is'} also "
        f"graded by {counted(hidden, 'hidden', hidden_points)} and {counted(trained, 'training', training_points)}"
        " after the deadline"
    )


def _check_lines(results: list[CheckResult], weigh: bool = False) -> list[str]:
    """The lines of one part's checks (see table); `weigh` (a run of the public checks alone): under each failed
    public check, what else of the grade runs its functions (weighing_line)."""
    lines = []
    for item in check_groups(results):
        if isinstance(item, Group) and not item.todo:
            output = item.results[0].output
            lines.append(
                f"    all {len(item.results)} checks FAIL  0.0/{item.max_score:<4.1f} "
                f"{output.splitlines()[0] if output else ''}"
            )
        elif isinstance(item, Group):
            lines.append(f"    {item.line}")
        else:
            mark = "PASS" if item.passed else "FAIL"
            lines.append(
                f"    {item.number:5s} {mark}  {item.score:4.1f}/{item.max_score:<4.1f} {item.name}"
                + ("" if item.passed else f"\n{_indent(item.output, 18)}")
            )
            weighs = weigh and not item.passed and item.visibility == "public" and weighing_line(item)
            if weighs:
                lines.append(" " * 18 + weighs)
    return lines


def _coverage(report: GradeReport) -> list[str]:
    """ "public checks: 50 of the grade's 116 points; 66 more from ...": what a run of some checks covers."""
    graded = report.part_totals()
    if not report.full_points or not graded:
        return []
    out_of = sum(t for _, t in graded.values())
    full = sum(report.full_points.get(part, t) for part, (_, t) in graded.items())
    if full <= out_of:
        return []
    return [
        f"public checks: {out_of:g} of the grade's {full:g} points; {full - out_of:g} more from hidden and "
        "training checks after the deadline"
    ]


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.splitlines()[:12])
