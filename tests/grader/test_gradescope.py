"""The Gradescope path end to end: build the zip, install it into a simulated /autograder tree the way
setup.sh does on Gradescope (a fresh virtual environment), and run run_autograder on the reference, the
stubs and a hostile submission. results.json must validate, score right, and show nothing hidden."""

import importlib.metadata
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.grader.gradescope import build_zip

pytestmark = pytest.mark.xdist_group("gradescope")  # one worker builds the shared fixture

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "gradescope_results.schema.json").read_text())
HIDDEN_SEED = 123456789

HOSTILE_BLEU = """
import json, os, pathlib
# Try to award ourselves full marks and read what we must not.
for path in ("/autograder/results/results.json", os.environ.get("AUTOGRADER_RESULTS", "")):
    try:
        pathlib.Path(path).write_text(json.dumps({"score": 1000, "tests": []}))
    except Exception:
        pass
LEAKED = []
for base in (os.environ.get("AUTOGRADER_SOURCE", ""),):
    try:
        LEAKED.append(pathlib.Path(base, "autograder", "grader", "hidden", "seed.json").read_text())
    except Exception:
        pass
def ngram_counts(tokens, n):
    raise ValueError("leaked: " + "|".join(LEAKED))
"""


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """A simulated /autograder: the zip extracted into source/, run_autograder beside it, setup.sh run."""
    root = tmp_path_factory.mktemp("gradescope") / "autograder"
    archive = build_zip(root.parent / "autograder.zip", seed=HIDDEN_SEED)
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        assert "setup.sh" in names and "run_autograder" in names
        assert not any(n.startswith(("tests/", "assignments/", ".git")) for n in names)
        zf.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    os.chmod(root / "run_autograder", 0o755)
    os.chmod(root.parent, 0o755)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "CAPTIONKIT_SKIP_APT": "1"}
    env.pop("CAPTIONKIT_CACHE", None)
    subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        env=env,
        check=True,
        timeout=900,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return root


def run_autograder(root: Path, files: dict[str, Path | str]) -> dict:
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    for name, content in files.items():
        target = submission / name
        if isinstance(content, Path):
            shutil.copy(content, target)
        else:
            target.write_text(content)
    env = {
        "PATH": os.environ["PATH"],
        "AUTOGRADER_ROOT": str(root),
        "AUTOGRADER_SOURCE": str(root / "source"),
        "AUTOGRADER_RESULTS": str(root / "results" / "results.json"),
        "CAPTIONKIT_TIME_SCALE": os.environ.get("CAPTIONKIT_TIME_SCALE", "1"),
    }
    subprocess.run(
        [str(root / "run_autograder")],
        env=env,
        check=True,
        timeout=900,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    document = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(document, SCHEMA)
    return document


def part_totals(document: dict) -> dict[str, tuple[float, float]]:
    totals = {}
    for test in document["tests"]:
        got, out_of = totals.get(test["tags"][0], (0.0, 0.0))
        totals[test["tags"][0]] = (got + test["score"], out_of + test["max_score"])
    return totals


def visible_text(document: dict) -> str:
    return document.get("output", "") + "".join(t["name"] + t["output"] for t in document["tests"])


def test_the_source_is_root_only_after_setup(installed):
    assert (installed / "source").stat().st_mode & 0o077 == 0


def test_the_image_grades_with_the_hypothesis_release_the_zip_was_built_with(installed):
    """The cases every property check draws are hypothesis's (the release's own algorithm): an image built from the
    zip, today or after a rebuild, installs the release of the environment that built it."""
    built_with = importlib.metadata.version("hypothesis")
    assert f'"hypothesis=={built_with}"' in (installed / "source" / "setup.sh").read_text()
    done = subprocess.run(
        [
            str(installed / "venv" / "bin" / "python"),
            "-c",
            "import importlib.metadata as m; print(m.version('hypothesis'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == built_with


# What a student must never read, as folders of the kit: the grader zone (hidden checks, references, hidden seed and
# data, the engine) and the reference solutions.
HIDDEN_TREES = ("autograder/grader", "solutions")


def exposed(root: Path) -> list[str]:
    """Files under root/venv of the hidden trees (or any seed.json), and RECORDs naming the hidden seed."""
    found = []
    for path in (root / "venv").rglob("*"):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and (path.name == "seed.json" or any(f"/{tree}/" in f"/{rel}" for tree in HIDDEN_TREES)):
            found.append(rel)
        if path.name == "RECORD" and "hidden/seed.json" in path.read_text(errors="replace"):
            found.append(f"{rel} names hidden/seed.json")
    return found


def test_the_hidden_trees_are_the_kits_and_a_file_of_them_in_the_venv_is_found(tmp_path):
    """HIDDEN_TREES names the kit's folders as they are (a moved folder fails here, not silently below), and a hidden
    check, a reference or the grader's engine installed into site-packages is reported."""
    assert all((ROOT / tree).is_dir() for tree in HIDDEN_TREES)
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    planted = ["autograder/grader/checks/bleu.py", "solutions/bleu.py", "autograder/grader/engine.py"]
    for rel in [*planted, "autograder/public/checks/bleu.py", "autograder/worker/main.py", "shared/vocab.py"]:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    prefix = "venv/lib/python3.11/site-packages/"
    assert sorted(exposed(tmp_path)) == sorted(prefix + rel for rel in planted)


def test_nothing_hidden_is_installed_where_the_worker_reads(installed):
    """The worker's interpreter reads the virtual environment: it must hold no reference solution, hidden check or
    seed, nor a RECORD naming them (a RECORD lists each file's SHA-256: a small seed falls to a search)."""
    found = exposed(installed)
    assert not found, found


def test_a_correct_part_earns_full_marks_and_a_missing_one_nothing(installed):
    """run_autograder's plumbing on correct code: the environment setup.sh made trains and grades a trained part
    (show_and_tell) to full marks; the parts not sent score 0 and say so. The full reference's full marks on
    every part are tests/grader/test_grader.py's (the same engine, without this door)."""
    document = run_autograder(installed, {"show_and_tell.py": ROOT / "solutions" / "show_and_tell.py"})
    totals = part_totals(document)
    assert len(totals) == 7 and totals["show_and_tell"][0] == totals["show_and_tell"][1] > 0, totals
    assert all(got == 0 for part, (got, _) in totals.items() if part != "show_and_tell"), totals
    assert document["score"] == totals["show_and_tell"][1]
    missing = [t for t in document["tests"] if t["tags"][0] != "show_and_tell"]
    assert all(t["output"] == f"{t['tags'][0]}.py is missing from the submission" for t in missing), missing


def test_stubs_earn_nothing_and_a_zip_upload_is_read(installed, tmp_path):
    """A zip upload's modules are found in its folder and graded: the stubs of the untrained parts earn nothing and
    say why (every part's stub earning nothing is tests/grader/test_grader.py's)."""
    stubs = ("decoding", "bleu")
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        for module in stubs:
            zf.write(ROOT / "assignments" / f"{module}.py", f"my_work/{module}.py")
    document = run_autograder(installed, {"upload.zip": upload})
    totals = part_totals(document)
    assert len(totals) == 7 and all(got == 0 for got, _ in totals.values()), totals
    for test in document["tests"]:
        if test["tags"][0] in stubs:
            assert "not implemented" in test["output"] or "NotImplementedError" in test["output"], test
        else:
            assert test["output"] == f"{test['tags'][0]}.py is missing from the submission", test
    assert "not implemented" in visible_text(document)


def test_a_hostile_submission_changes_nothing_and_sees_nothing(installed):
    document = run_autograder(installed, {"bleu.py": HOSTILE_BLEU, "decoding.py": ROOT / "solutions" / "decoding.py"})
    totals = part_totals(document)
    assert totals["bleu"][0] == 0 and totals["decoding"][0] == totals["decoding"][1]
    assert document["score"] == totals["decoding"][1]
    text = visible_text(document)
    assert str(HIDDEN_SEED) not in text
    assert "leaked: " in text or "your code raised an exception" in text


def test_the_zip_takes_files_only_and_never_a_bytecode_cache(tmp_path):
    """Where the kit ran without PYTHONDONTWRITEBYTECODE, importing autograder.grader.templates leaves a __pycache__
    folder that `templates/*` matches: the zip is built all the same, without it."""
    from autograder.grader.gradescope import source_files

    templates = tmp_path / "autograder" / "grader" / "templates"
    (templates / "__pycache__").mkdir(parents=True)
    (templates / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    (templates / "setup.sh").write_text("#!/bin/sh\n")
    (tmp_path / "autograder" / "worker" / "__pycache__").mkdir(parents=True)
    (tmp_path / "autograder" / "worker" / "__pycache__" / "main.cpython-311.py").write_text("")
    (tmp_path / "autograder" / "worker" / "main.py").write_text("")
    found = [p.relative_to(tmp_path).as_posix() for p in source_files(tmp_path)]
    assert found == ["autograder/worker/main.py", "autograder/grader/templates/setup.sh"], found
