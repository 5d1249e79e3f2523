"""`python -m instructor golden [--check]`: the golden data of the public checks, computed from the reference.

A public check whose expected values nothing public computes (the captioner of Part 4, the StyleNet a styled
update starts from in Part 7) reads them from autograder/public/golden/<part>.pt: the reference's answers on the
check's fixed public cases, which the check module describes (its `golden_cases(reference)` and `FINGERPRINT`).
This command computes them with the reference solutions and writes the files; --check writes nothing and exits 1
when a stored file differs from what the reference gives now (tests/public/test_public_checks.py runs it), as `stubs --check`
does for the stubs.
"""

from __future__ import annotations

import argparse
import importlib
import io
from pathlib import Path

import torch

from autograder.public import golden

# The parts whose public checks read golden data.
PARTS = ("attention", "bleu", "lstm_a", "show_and_tell", "stylenet")
# Two computations of the same golden value on two machines may differ in the last bits of a float64.
TOLERANCE = dict(rtol=1e-12, atol=1e-12)


def compute(part: str) -> bytes:
    """The golden file of `part` as the reference gives it now."""
    torch.set_num_threads(1)
    checks = importlib.import_module(f"autograder.public.checks.{part}")
    reference = importlib.import_module(f"solutions.{part}")
    return golden.dumps(checks.golden_cases(reference), checks.FINGERPRINT)


def differences(stored: bytes, computed: bytes) -> list[str]:
    """What differs between two golden files (one line each; empty when they agree)."""
    try:
        old = torch.load(io.BytesIO(stored), weights_only=True)
    except Exception as exc:  # noqa: BLE001 (an unreadable file differs, whatever the reason)
        return [f"unreadable ({type(exc).__name__})"]
    return list(_compare("", old, torch.load(io.BytesIO(computed), weights_only=True)))


def _compare(where: str, old, new):
    if isinstance(new, torch.Tensor):
        if not (
            isinstance(old, torch.Tensor)
            and old.shape == new.shape
            and old.dtype == new.dtype
            and torch.allclose(old, new, **TOLERANCE)
        ):
            yield f"{where or 'the file'}: the values differ"
    elif isinstance(new, dict):
        if not isinstance(old, dict) or set(old) != set(new):
            yield f"{where or 'the file'}: other keys"
        else:
            for key in new:
                yield from _compare(f"{where}/{key}", old[key], new[key])
    elif isinstance(new, (list, tuple)):
        if not isinstance(old, (list, tuple)) or len(old) != len(new):
            yield f"{where}: another number of entries"
        else:
            for i, (a, b) in enumerate(zip(old, new)):
                yield from _compare(f"{where}[{i}]", a, b)
    elif old != new:
        yield f"{where}: {old!r} instead of {new!r}"


def run(check: bool = False) -> int:
    """Write every golden file, or (check) report the stored ones that differ; returns the exit status."""
    stale = 0
    for part in PARTS:
        path = golden.path_of(part)
        computed = compute(part)
        rel = Path("autograder/public/golden") / path.name
        if check:
            found = differences(path.read_bytes(), computed) if path.exists() else ["missing"]
            for line in found[:5]:
                print(f"{rel} differs from the reference's answers: {line}")
            stale += bool(found)
        else:
            path.write_bytes(computed)
            print(f"wrote {rel} ({len(computed) // 1024} KB)")
    if check:
        print(
            f"golden: {len(PARTS) - stale} of {len(PARTS)} files up to date"
            + ("; regenerate with `python -m instructor golden`" if stale else "")
        )
    return 1 if stale else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `golden` command to the instructor CLI."""
    command = subparsers.add_parser("golden", help="compute the golden data of the public checks from the reference")
    command.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if a stored golden file differs from the reference's answers",
    )
    command.set_defaults(run=lambda args: run(args.check))
