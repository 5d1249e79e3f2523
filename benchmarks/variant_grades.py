"""Every check's score on the reference, the bundled sample and every variant of tests/meta, for comparing two trees.

    python benchmarks/variant_grades.py --out grades.json [--part PART ...] [--variant NAME ...]
    python benchmarks/variant_grades.py --compare before.json after.json

A change that should not move a grade (a refactoring of the checks, a tolerance given a name) is proven by running
the first form on the tree before and after it and comparing: the second form prints each check whose score
differs and exits 1 if any does. Each variant is graded as the kit's variant suite grades it, its part alone, the
public checks with their grader's round and the hidden checks, without the training checks (what a refactoring of
the property checks can move); the reference and the sample are graded in every part, the same way. Sequential:
about 20 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def scores(submission: Path, parts: tuple[str, ...] | None) -> dict[str, float]:
    """{part.check: score} of a grade of `submission` without training."""
    from autograder.grader.engine import GradeOptions, grade

    report = grade(submission, GradeOptions(parts=parts, training="without"))
    return {f"{r.part}.{r.name}": r.score for r in report.results}


def collect(parts: list[str], names: list[str]) -> dict[str, dict[str, float]]:
    from autograder.grader import sample
    from shared.parts import MODULES
    from tests.meta.variants import all_variants, make_submission

    chosen = tuple(parts) if parts else tuple(MODULES)
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="variant-grades-") as scratch:
        found["reference"] = scores(ROOT / "solutions", chosen)
        found["sample"] = scores(sample.build(Path(scratch) / "sample"), chosen)
        for variant in all_variants():
            if variant.part in chosen and (not names or variant.name in names):
                folder = make_submission(Path(scratch) / f"{variant.part}-{variant.name}", variant)
                found[f"{variant.part}/{variant.name}"] = scores(folder, (variant.part,))
                print(f"{variant.part}/{variant.name}: {sum(found[f'{variant.part}/{variant.name}'].values()):g}")
    return found


def compare(before: dict, after: dict) -> list[str]:
    """One line per (submission, check) whose score differs or is missing on one side."""
    lines = []
    for label in sorted(set(before) | set(after)):
        old, new = before.get(label, {}), after.get(label, {})
        for check in sorted(set(old) | set(new)):
            if old.get(check) != new.get(check):
                lines.append(f"{label} {check}: {old.get(check)} -> {new.get(check)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write {submission: {part.check: score}} here")
    parser.add_argument("--part", action="append", default=[], help="only this part (repeatable)")
    parser.add_argument("--variant", action="append", default=[], help="only this variant (repeatable)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        lines = compare(before, after)
        checks = sum(len(v) for v in after.values())
        print("\n".join(lines) or f"identical: {len(after)} submissions, {checks} check scores")
        return 1 if lines else 0
    if args.out is None:
        parser.error("--out: expected a file to write (or --compare BEFORE AFTER)")
    found = collect(args.part, args.variant)
    args.out.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"{len(found)} submissions, {sum(len(v) for v in found.values())} check scores: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
