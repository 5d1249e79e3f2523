# hostile: appended to solutions/bleu.py
# A10: read the reference, the hidden seed, the checks, the kit's tests, the instructor tools and the history
# from the kit's folder (its place is no secret: the interpreter's path and the editable install name it),
# and import the reference and the checks by name.
import importlib
import json
import os
import sys

REPO = "@@REPO@@"
TARGETS = {"solutions": "solutions/bleu.py", "seed": "autograder/grader/hidden/seed.json",
           "checks": "autograder/grader/checks/bleu.py", "tests": "tests/test_grader.py",
           "instructor": "instructor/__init__.py", "git": ".git/HEAD"}


def _read(path) -> str:
    try:
        with open(path, "rb") as f:
            f.read(64)
        return "read"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _list(path) -> str:
    try:
        return f"listed {len(os.listdir(path))}"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _import(name) -> str:
    try:
        importlib.import_module(name)
        return "imported"
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__


def _probe() -> dict:
    found = {key: _read(os.path.join(REPO, rel)) for key, rel in TARGETS.items()}
    found.update({f"ls_{d}": _list(os.path.join(REPO, d)) for d in ("solutions", "autograder/grader/checks",
                                                                      "autograder/grader/hidden", "tests")})
    found.update({f"import_{m}": _import(m) for m in ("solutions.bleu", "autograder.grader.checks.bleu",
                                                      "autograder.grader.hidden.seed")})
    return found


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if sys._getframe(1).f_globals.get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(_probe(), separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
