"""Golden data: what a public check needs that nothing public can compute, computed by the instructor's tooling from
the reference on the check's fixed public cases, and stored here as plain tensors (one file per part, read with
torch.load(weights_only=True)).

    python -m instructor golden            # regenerate every golden file from the reference
    python -m instructor golden --check    # exit 1 when a stored file differs from what the reference gives now

A golden file carries the fingerprint of the check definitions it was computed for (the fixed cases and the code
that builds their inputs, autograder.public.golden.fingerprint): a file missing, unreadable, or older than the
checks that read it stops those checks with one line that says so and what to do: in the kit, how to regenerate it;
in a student's handout, to download the handout again or tell the course staff (REMEDY). Golden data is never
an answer key: the grader runs every public check on cases of its own as well (autograder.public.checks.Round).
"""

from __future__ import annotations

import hashlib
import inspect
import io
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
FORMAT = 1  # the layout of a golden file: {"format", "fingerprint", "cases": {name: [case, ...]}}
# What to do about a bad golden file depends on who holds it. In the kit, beside the instructor's tooling that computes
# golden files, the instructor regenerates it; a student's handout has no such tooling (and no reference to compute
# from), so the student gets a fresh copy of the handout or tells the course staff.
IN_KIT = (Path(__file__).resolve().parents[3] / "instructor" / "golden.py").is_file()
REGENERATE = "regenerate it with `python -m instructor golden`"
DOWNLOAD_AGAIN = (
    "download the assignment's handout again and check with the fresh copy; if the error stays, tell the course staff"
)
REMEDY = REGENERATE if IN_KIT else DOWNLOAD_AGAIN


class GoldenDataError(Exception):
    """A golden file is missing, unreadable or older than its checks; the message is one line."""


def path_of(part: str) -> Path:
    return HERE / f"{part}.pt"


def fingerprint(*definitions) -> str:
    """A short digest of the check definitions a golden file was computed for: values (the fixed cases) by their
    repr, functions and classes by their source."""
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    for item in definitions:
        text = inspect.getsource(item) if callable(item) else repr(item)
        digest.update(text.encode() + b"\n")
    return digest.hexdigest()[:16]


def load(part: str, expected_fingerprint: str) -> dict[str, list]:
    """{name: [case, ...]} of the part's golden file; GoldenDataError when it is missing, unreadable or computed for
    other check definitions."""
    path = path_of(part)
    where = f"autograder/public/golden/{path.name}"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise GoldenDataError(f"{where} is missing: {REMEDY}") from None
    except OSError as exc:
        raise GoldenDataError(f"{where} cannot be read ({exc.strerror}): {REMEDY}") from None
    try:
        document = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as exc:  # noqa: BLE001 (any failure to read it is the same one line)
        raise GoldenDataError(f"{where} is corrupted ({type(exc).__name__}): {REMEDY}") from None
    if not (
        isinstance(document, dict) and document.get("format") == FORMAT and isinstance(document.get("cases"), dict)
    ):
        raise GoldenDataError(f"{where} is not a golden file of format {FORMAT}: {REMEDY}")
    if document.get("fingerprint") != expected_fingerprint:
        raise GoldenDataError(
            f"{where} is older than the checks that read it (fingerprint "
            f"{document.get('fingerprint')!r}, the checks' {expected_fingerprint!r}): {REMEDY}"
        )
    return document["cases"]


def dumps(cases: dict[str, list], fingerprint_: str) -> bytes:
    """The bytes of a golden file holding `cases` (plain data and tensors) for checks of `fingerprint_`."""
    buffer = io.BytesIO()
    torch.save({"format": FORMAT, "fingerprint": fingerprint_, "cases": cases}, buffer)
    return buffer.getvalue()
