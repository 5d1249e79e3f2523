"""The student handout (`python -m instructor handout`): built once per test session into a temporary folder (and a
zip), then used as a student would, by an interpreter of its own that sees the handout and the installed packages
but nothing of the kit (no `solutions`, no `autograder.grader`, no `instructor`):

- it holds what a student needs (seven stubs, seven notebooks and their otter tests, the public checker, the
  shared modules they import, README, install file) and nothing else: no line from inside a solution region, no
  line of a hidden check, no hidden seed, no compiled file or cache, in the folder or the zip;
- `python -m autograder.public check` there gives the stubs no public point, with one line per unwritten TODO
  naming the public checks that wait for it (every public check waits for one), passes
  every public check of the seven reference modules copied in, and names a module that is missing;
- the build refuses a kit it cannot hand out (a drifted stub, a bad golden file) with one line.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from autograder.grader import gradescope, rubric
from autograder.grader.checks import checks_of
from autograder.grader.context import HIDDEN
from instructor import golden as golden_command
from instructor import handout
from instructor.__main__ import main
from shared.parts import MODULES
from tests.handout_env import CHECK_TIMEOUT, run_in, student_env
from tests.kernels import run_notebook

ROOT = Path(__file__).resolve().parents[2]
# A line shorter than this ("else:", "return h, c", "hs = []") says nothing about a solution or a check.
DISTINCTIVE = 24
# Lines of solution regions that the handout holds on purpose, each with why it gives nothing away.
REVIEWED = {
    "for t in range(captions.shape[1] - 1):": "the teacher-forcing loop of every recipe and public oracle",
    "if image_term is not None:": "the public RNN-cell oracle's optional image term",
    "return torch.stack(out, 1)": "a recipe stacking the steps it decoded",
}


def copy_of(folder: Path, where: Path) -> Path:
    """A copy of the handout to work in (the built one stays as it was built, for the leak test)."""
    shutil.copytree(folder, where)
    return where


def public_checks() -> dict[str, list[str]]:
    """{part: [public check name, ...]} in the rubric's order."""
    return {
        part: [n for n, e in entries.items() if e.visibility == "public"] for part, entries in rubric.load().items()
    }


def check_lines(out: str) -> dict[str, tuple[str, str]]:
    """{check name: (PASS or FAIL, the first line under it)} from the printed table."""
    lines = out.splitlines()
    found = {}
    for i, line in enumerate(lines):
        m = re.fullmatch(r"\s+\d+\.\d+\s+(PASS|FAIL)\s+\S+\s+(\w+)", line)
        if m:
            below = lines[i + 1].strip() if m[1] == "FAIL" and i + 1 < len(lines) else ""
            found[m[2]] = (m[1], below)
    return found


# -- what is in it -------------------------------------------------------------------------------------------------


def test_the_handout_holds_what_students_need(built):
    folder, _ = built
    names = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    public_checks = ROOT / "autograder" / "public" / "checks"
    for module in MODULES:
        checks = [  # the part's public checks: a module, or a package of modules
            p.relative_to(ROOT).as_posix()
            for p in (*public_checks.glob(f"{module}.py"), *public_checks.glob(f"{module}/*.py"))
        ]
        assert checks, f"{module}: no public checks in the kit"
        assert {
            f"{module}.py",
            f"{module}.ipynb",
            f"tests/{module}.py",
            f"autograder/worker/recipes/{module}.py",
            *checks,
        } <= names
        assert (folder / f"{module}.py").read_text() == (ROOT / "assignments" / f"{module}.py").read_text()
    assert {
        "README.md",
        "install.py",
        "requirements.txt",
        "autograder/public/rubric.json",
        "autograder/public/__main__.py",
        "shared/__init__.py",
        "shared/parts.py",
    } <= names
    top = {name.split("/")[0] for name in names}
    assert top == {
        "README.md",
        "install.py",
        "requirements.txt",
        "autograder",
        "shared",
        "tests",
        "figures",
        *(f"{m}.py" for m in MODULES),
        *(f"{m}.ipynb" for m in MODULES),
    }
    for module in MODULES:  # each notebook's "what you should see", as committed
        assert (folder / "figures" / f"{module}.png").read_bytes() == (
            ROOT / "assignments" / "figures" / f"{module}.png"
        ).read_bytes()
    assert not any(name.startswith(("autograder/grader", "solutions", "instructor")) for name in names)


def test_the_student_readme_has_the_two_commands_and_the_submission(built):
    text = (built[0] / "README.md").read_text()
    assert "python install.py" in text and f"python -m {handout.CHECKER} check" in text
    assert all(f"`{m}.py`" in text for m in MODULES) and "Gradescope" in text and "nbgrader" in text
    assert "@" not in re.sub(r"\S+@\S+", "", text.replace(handout.GENERATED, ""))  # every placeholder filled


def test_the_requirements_are_the_kits_and_install_plans_only_what_is_missing(built, student_python):
    folder, _ = built
    requirements = (folder / "requirements.txt").read_text()
    for name in handout.STUDENT_PACKAGES:
        assert re.search(rf"^{name}[=<>]", requirements, re.M), name
    done = run_in(folder, student_python, "install.py", "--dry-run", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "install: everything the assignment needs is installed", done.stdout


def test_students_install_the_hypothesis_release_the_grader_draws_with(built):
    """A property check's cases depend on hypothesis's release: the handout asks for the one the Gradescope zip pins
    (autograder/grader/gradescope.py), so `check` draws the public cases the grader's public round draws."""
    requirements = (built[0] / "requirements.txt").read_text().splitlines()
    assert f"hypothesis=={gradescope.hypothesis_version()}" in requirements


def test_install_puts_a_cpu_torch_first_and_keeps_what_is_installed(built, monkeypatch):
    """As on a fresh machine (nothing installed) and as on Colab (torch and numpy there, the rest missing)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("handout_install", built[0] / "install.py")
    install = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(install)
    wanted = install.requirements(built[0] / "requirements.txt")
    monkeypatch.setattr(install.sys, "platform", "linux")
    monkeypatch.setattr(install, "installed_version", lambda name: None)
    commands, _ = install.plan(wanted)
    assert commands[0][-3:] == ["--index-url", install.TORCH_CPU_INDEX, str(wanted[0])] and "torch" in commands[0][-1]
    assert len(commands) == 2 and not any("torch" in arg for arg in commands[1])
    on_colab = {"torch": "2.5.1+cu121", "numpy": "1.26.4", "notebook": "6.5.5"}
    monkeypatch.setattr(install, "installed_version", on_colab.get)
    commands, notes = install.plan(wanted)
    assert len(commands) == 1 and not any(arg.startswith(("torch", "numpy", "notebook")) for arg in commands[0])
    assert "torch 2.5.1+cu121 is installed" in notes


# -- the leak test -----------------------------------------------------------------------------------------------


def handout_files(built) -> dict[str, bytes]:
    """{name: bytes} of every file of the handout folder and, prefixed "zip:", of its zip; the zip holds the same
    files under one folder."""
    folder, archive = built
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    with zipfile.ZipFile(archive) as z:
        zipped = {name.split("/", 1)[1]: z.read(name) for name in z.namelist() if not name.endswith("/")}
        assert {name.split("/", 1)[0] for name in z.namelist()} == {archive.stem}
    assert zipped == files
    return files | {f"zip:{name}": data for name, data in zipped.items()} | {"zip": archive.read_bytes()}


def region_lines(text: str) -> tuple[set[str], set[str]]:
    """(stripped lines inside `### BEGIN SOLUTION` ... `### END SOLUTION`, stripped lines outside) of a module."""
    inside, outside, open_ = set(), set(), False
    for line in text.splitlines():
        stripped = line.strip()
        if re.fullmatch(r"#+\s*BEGIN SOLUTION\s*", stripped):
            open_ = True
        elif re.fullmatch(r"#+\s*END SOLUTION\s*", stripped):
            open_ = False
        elif stripped:
            (inside if open_ else outside).add(stripped)
    return inside, outside


def secret_solution_lines() -> dict[str, str]:
    """{line: module} of the distinctive lines inside the solution regions of solutions/*.py that the stubs do not
    hold (a line that is also outside every region, say a loop the stub keeps, is no secret)."""
    inside, outside = {}, set()
    for path in sorted((ROOT / "solutions").glob("*.py")):
        lines_in, lines_out = region_lines(path.read_text(encoding="utf-8"))
        outside |= lines_out
        inside |= {line: path.name for line in lines_in if len(line) >= DISTINCTIVE}
    return {line: where for line, where in inside.items() if line not in outside and line not in REVIEWED}


def secret_check_lines() -> dict[str, str]:
    """{line: check} of the distinctive lines of every hidden check's source that no public check module or recipe
    holds (hidden checks call the helpers that public checks call: such a line is public already)."""
    public = set()
    for path in [
        *(ROOT / "autograder" / "public" / "checks").rglob("*.py"),
        *(ROOT / "autograder" / "worker" / "recipes").glob("*.py"),
    ]:
        public |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    entries = rubric.load()
    found = {}
    for part in MODULES:
        for chk in checks_of(part):
            if entries[part][chk.name].visibility == "hidden":
                for line in inspect.getsource(chk.fn).splitlines():
                    if len(line.strip()) >= DISTINCTIVE and line.strip() not in public:
                        found.setdefault(line.strip(), f"{part}.{chk.name}")
    return found


def leaks(files: dict[str, bytes], secrets: dict[str, str]) -> list[str]:
    """'file: line (from where)' for every secret line found as a line of a text file (the zip's members are
    compressed, so they are looked for in its members)."""
    found = []
    for name, data in files.items():
        if name == "zip":
            continue
        lines = {line.strip() for line in data.decode("utf-8", errors="replace").splitlines()}
        if name.endswith(".ipynb"):  # a notebook's code is JSON strings, one per line
            cells = json.loads(data)["cells"]
            lines |= {line.strip() for cell in cells for line in "".join(cell["source"]).splitlines()}
        found += [f"{name}: {line!r} (from {where})" for line, where in secrets.items() if line in lines]
    return found


def test_no_solution_line_is_in_the_handout(built):
    secrets = secret_solution_lines()
    assert len(secrets) > 100  # the regions are read (a wrong marker pattern would find none)
    assert leaks(handout_files(built), secrets) == []


def test_no_hidden_check_line_is_in_the_handout(built):
    secrets = secret_check_lines()
    assert len(secrets) > 100
    assert leaks(handout_files(built), secrets) == []


def test_the_leak_scans_find_a_planted_line(built, tmp_path):
    """The scans above are not blind: a solution line and a hidden check's line planted in copies are found."""
    solution, check = next(iter(secret_solution_lines())), next(iter(secret_check_lines()))
    files = handout_files(built)
    planted = files | {
        "shared/vocab.py": files["shared/vocab.py"] + f"\n    {solution}\n".encode(),
        "zip:bleu.ipynb": files["zip:bleu.ipynb"].replace(
            b'"source": [', b'"source": [' + json.dumps(check + "\n").encode() + b", ", 1
        ),
    }
    assert len(leaks(planted, secret_solution_lines())) == 1
    assert len(leaks(planted, secret_check_lines())) == 1


# The first scenes of each hidden split stand for the split: a file holding the split's captions or tensors holds
# them (make_scenes draws scene after scene from one random stream, so the first ones are the same for any n).
HIDDEN_SCENES = 4


def _number_forms(name: str, value: int, width: int) -> dict[str, re.Pattern | bytes]:
    """{what: needle} of an integer secret in the encodings a file could hold it in: decimal and hex text (as a
    whole number, not a run of digits inside a longer one), and binary of `width` bytes in both byte orders."""
    forms: dict[str, re.Pattern | bytes] = {
        f"{name} in decimal": re.compile(rb"(?<![0-9])%d(?![0-9])" % value),
        f"{name} in hex": re.compile(rb"(?<![0-9a-fA-F])(?:0x)?%x(?![0-9a-fA-F])" % value, re.I),
    }
    for order in ("little", "big"):
        forms[f"{name} as {width} bytes, {order}-endian"] = value.to_bytes(width, order)
    return forms


def hidden_fingerprints() -> dict[str, re.Pattern | bytes]:
    """{what: a regex or bytes that a file holding it would contain}: the hidden seed and the hidden test secret in
    every encoding (decimal, hex, binary, base64, float), the seed file, and each hidden split's captions (its first
    scenes' captions in order, whatever separates them) and tensors (their images and tokens, in the dtypes a file
    could store them in)."""
    import base64
    import struct

    import torch

    from autograder.grader.context import hidden_seed, hidden_test_secret
    from shared.scenes import make_scenes

    seed, secret = hidden_seed(), hidden_test_secret()
    found = {"the seed file": (HIDDEN / "seed.json").read_bytes()}
    found |= _number_forms("the hidden seed", seed, 4) | _number_forms("the hidden seed", seed, 8)
    found |= {
        "the hidden seed as float32": struct.pack("<f", seed),
        "the hidden seed as float64": struct.pack("<d", seed),
    }
    found |= _number_forms("the hidden test secret", secret, 16)
    found["the hidden test secret in base64"] = base64.b64encode(secret.to_bytes(16, "big"))
    for split, split_seed in (("training", seed), ("test", secret)):
        scenes = make_scenes(HIDDEN_SCENES, split_seed)
        found[f"the hidden {split} split's captions"] = re.compile(
            rb".{0,8}".join(re.escape(caption.encode()) for caption in scenes.targets), re.S
        )
        for dtype in (torch.float32, torch.float64):
            found[f"the hidden {split} split's images as {dtype}"] = scenes.images[0, 0, 0].to(dtype).numpy().tobytes()
        for dtype in (torch.int64, torch.int32):
            found[f"the hidden {split} split's tokens as {dtype}"] = scenes.tokens.to(dtype).numpy().tobytes()
    return found


def hidden_data_leaks(files: dict[str, bytes], fingerprints: dict[str, re.Pattern | bytes]) -> list[str]:
    """'file: what' for every fingerprint found in a file (the zip itself is compressed: its members are searched,
    decompressed, under "zip:")."""
    found = []
    for name, data in files.items():
        if name == "zip":
            continue
        found += [
            f"{name}: {what}"
            for what, needle in fingerprints.items()
            if (needle.search(data) if isinstance(needle, re.Pattern) else needle in data)
        ]
    return found


def test_no_hidden_seed_nor_hidden_data_is_in_the_handout(built):
    files = handout_files(built)
    assert hidden_data_leaks(files, hidden_fingerprints()) == []
    # Binary files are the golden data, which holds the public cases' tensors (their inputs come from fixed public
    # seeds, checked by tests/public/test_public_checks.py), never the grader's data cache, and the notebooks' reference
    # figures (drawn on the notebooks' public scenes).
    binary = {name for name in files if name.endswith((".pt", ".png"))}
    assert binary == {
        f"{prefix}{name}"
        for prefix in ("", "zip:")
        for name in [
            *(f"autograder/public/golden/{part}.pt" for part in golden_command.PARTS),
            *(f"figures/{part}.png" for part in MODULES),
        ]
    }
    for name, data in files.items():
        if name != "zip" and not name.endswith((".pt", ".png")):
            data.decode("utf-8")  # every other file is text


def test_the_hidden_data_scan_finds_each_planted_secret(built):
    """The scan above is not blind: each secret planted in a copy of a text file and of a golden file (a number as a
    program would print it, the captions as a JSON list, the bytes as they are) is found there, and nowhere else;
    a tensor of the hidden test split saved by torch.save is found too."""
    import io

    import torch

    from autograder.grader.context import hidden_seed, hidden_test_secret
    from shared.scenes import make_scenes

    seed, secret = hidden_seed(), hidden_test_secret()
    test_scenes = make_scenes(HIDDEN_SCENES, secret)
    fingerprints = hidden_fingerprints()
    printed = {
        "the hidden seed in decimal": b"seed = %d" % seed,
        "the hidden seed in hex": b"seed = 0x%X" % seed,
        "the hidden test secret in decimal": b"[%d]" % secret,
        "the hidden test secret in hex": b'"%x"' % secret,
        "the hidden training split's captions": json.dumps(make_scenes(HIDDEN_SCENES, seed).targets).encode(),
        "the hidden test split's captions": json.dumps(test_scenes.targets).encode(),
    }
    files = handout_files(built)
    for what, needle in fingerprints.items():
        plant = printed[what] if isinstance(needle, re.Pattern) else needle
        for name in ("shared/vocab.py", "zip:autograder/public/golden/attention.pt"):
            copy = files | {name: files[name] + b"\n" + plant + b"\n"}
            assert hidden_data_leaks(copy, {what: needle}) == [f"{name}: {what}"], (what, plant)
    buffer = io.BytesIO()
    torch.save({"tokens": test_scenes.tokens}, buffer)
    assert hidden_data_leaks({"extra.pt": buffer.getvalue()}, fingerprints) == [
        "extra.pt: the hidden test split's tokens as torch.int64"
    ]


def test_no_compiled_file_cache_or_hidden_file_is_in_the_handout(built):
    for name in handout_files(built):
        parts = name.removeprefix("zip:").split("/")
        assert not any(p.startswith(".") or p in ("__pycache__", ".ipynb_checkpoints") for p in parts), name
        assert not name.endswith((".pyc", ".pyo")), name


# -- the handout alone runs the checks -----------------------------------------------------------------------------


def test_the_student_interpreter_sees_the_handout_and_not_the_kit(built, student_python):
    probe = (
        "import importlib.util as u, autograder, shared\n"
        "print(autograder.__file__, shared.__file__)\n"
        "print([m for m in ('solutions', 'instructor', 'autograder.grader', 'tests.meta') if u.find_spec(m)])\n"
    )
    done = run_in(built[0], student_python, "-c", probe, timeout=120)
    assert done.returncode == 0, done.stderr
    paths, found = done.stdout.splitlines()
    assert all(Path(p).resolve().is_relative_to(built[0].resolve()) for p in paths.split()), paths
    assert found == "[]"


def test_check_on_the_stubs_names_the_todo_every_public_check_waits_for(built, student_python, tmp_path):
    """No public point, and one line per unwritten TODO naming the public checks that wait for it: every public
    check of every part waits for one."""
    folder = copy_of(built[0], tmp_path / "captioning")
    done = run_in(folder, student_python, "-m", handout.CHECKER, "check")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # 1: a check failed
    entries = rubric.load()
    waiting = {part: set() for part in MODULES}
    for part, numbers in re.findall(
        r"^    TODO [\w.]+ \((\w+)\.py:\d+\): \d+ checks? waits? for it \(([\d., ]+):", done.stdout, re.M
    ):
        waiting[part] |= {int(n.split(".")[1]) for n in numbers.split(", ")}
    for part in MODULES:
        public = {e.number for e in entries[part].values() if e.visibility == "public"}
        assert waiting[part] == public, f"{part}: {done.stdout[-3000:]}"
    total = sum(e.points for part in entries.values() for e in part.values() if e.visibility == "public")
    assert re.search(rf"^total\s+0\.0 /\s+{total:.1f}", done.stdout, re.M), done.stdout[-500:]


def test_check_passes_every_public_check_of_the_references(built, student_python, tmp_path):
    folder = copy_of(built[0], tmp_path / "captioning")
    for module in MODULES:
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder / f"{module}.py")
    done = run_in(folder, student_python, "-m", handout.CHECKER, "check")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = check_lines(done.stdout)
    expected = [name for names in public_checks().values() for name in names]
    assert sorted(lines) == sorted(expected)
    assert [f"{n}: {v} {why}" for n, (v, why) in lines.items() if v != "PASS"] == []


def test_check_names_a_module_missing_from_the_folder(built, student_python, tmp_path):
    (tmp_path / "work").mkdir()
    done = run_in(built[0], student_python, "-m", handout.CHECKER, "check", str(tmp_path / "work"), "--part", "bleu")
    assert done.returncode == 1, done.stderr[-3000:]
    lines = check_lines(done.stdout)
    public = [e for e in rubric.load()["bleu"].values() if e.visibility == "public"]
    points = sum(e.points for e in public)
    assert not lines and re.search(
        rf"^    all {len(public)} checks FAIL +0\.0/{points:.1f} +bleu\.py is missing from the "
        r"submission$",
        done.stdout,
        re.M,
    ), done.stdout
    done = run_in(built[0], student_python, "-m", handout.CHECKER, "check", str(tmp_path / "nowhere"), timeout=120)
    assert done.returncode == 2 and "nowhere: not a folder" in done.stderr


TRAINED_LINE = re.compile(r"^show_and_tell: exact match (\S+) \(threshold 0\.4\): (reaches the threshold|FAILS)$", re.M)
CONTROL_LINE = re.compile(r"^        (?:zeroed|shuffled) images.*: exact match (\S+) \(expected near 0 ", re.M)


def test_check_train_trains_part_1_with_the_students_own_decoder(built, student_python, tmp_path):
    """`check --train --part show_and_tell` in the handout: Part 1, the cheapest trained part, whose run decodes with
    Part 2's greedy_decode, trained with the kit's recipe and budget on the public data, with the student's own
    decoding.py where the grader uses its reference. With the references copied in, it reaches the threshold and
    prints the score beside it with the image controls, the trained recall@1, and where the grader's budgets are;
    with a caption_loss detached from the graph (an obvious training bug), it fails, saying why and that the run used
    the student's own decoding.py."""
    import subprocess

    from autograder.public.published_training import PUBLISHED
    from shared.encoder import cache_dir

    folder = copy_of(built[0], tmp_path / "captioning")
    for module in ("show_and_tell", "decoding"):
        shutil.copy(ROOT / "solutions" / f"{module}.py", folder / f"{module}.py")
    env = student_env() | {"CAPTIONKIT_CACHE": str(cache_dir())}  # the kit's encoder outputs of the public data

    def train() -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(student_python), "-m", handout.CHECKER, "check", "--train", "--part", "show_and_tell"],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
        )

    done = train()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    score, verdict = TRAINED_LINE.search(done.stdout).groups()
    assert verdict == "reaches the threshold" and float(score) >= PUBLISHED["show_and_tell"].threshold
    controls = [float(x) for x in CONTROL_LINE.findall(done.stdout)]
    assert len(controls) == 2 and max(controls) < 0.1, done.stdout
    assert re.search(r"^    recall@1 \S+ \(threshold 0\.3\): reaches the threshold$", done.stdout, re.M), done.stdout
    assert "your own" not in done.stdout
    assert re.search(
        r"Time: a run here may take \d+ s; the grader stops a run at 3 x the reference's training "
        r"time ",
        done.stdout,
    ), done.stdout

    source = (folder / "show_and_tell.py").read_text()
    detached = source.replace("ignore_index=PAD)\n", "ignore_index=PAD).detach() + 0 * logits.sum()\n", 1)
    assert detached != source
    (folder / "show_and_tell.py").write_text(detached)
    done = train()
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if TRAINED_LINE.match(line))
    assert TRAINED_LINE.match(lines[first])[2] == "FAILS", done.stdout
    assert re.fullmatch(
        r"    exact match \S+ on the public test scenes; the threshold is 0\.4; the training loss did "
        r"not fall \(first epoch \S+, last \S+\): no learning signal reaches the parameters",
        lines[first + 1],
    ), done.stdout
    assert (
        "    this run used your own decoding.py, where the grader uses the reference versions: a bug there can be "
        "the cause" in lines
    ), done.stdout


# -- the build refuses what it cannot hand out ---------------------------------------------------------------------


def test_a_drifted_stub_stops_the_build_with_one_line(tmp_path, monkeypatch, capsys):
    for folder in ("solutions", "assignments"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "assignments" / "bleu.py").write_text((tmp_path / "assignments" / "bleu.py").read_text() + "\n# x\n")
    monkeypatch.setattr(handout, "ROOT", tmp_path)
    assert main(["handout", "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert out == (
        "handout: assignments/bleu.py differs from the stub generated from solutions/bleu.py; run "
        "`python -m instructor stubs` first\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "damage, message",
    [
        ("missing", r"autograder/public/golden/attention\.pt is missing: "),
        ("corrupted", r"autograder/public/golden/attention\.pt is corrupted \(\w+\): "),
        ("stale", r"autograder/public/golden/attention\.pt is older than the checks that read it "),
    ],
)
def test_a_bad_golden_file_stops_the_build_with_one_line(damage, message, tmp_path, monkeypatch, capsys):
    import torch

    from autograder.public import golden

    for part in golden_command.PARTS:
        shutil.copy(golden.path_of(part), tmp_path / f"{part}.pt")
    monkeypatch.setattr(golden, "HERE", tmp_path)
    good = (tmp_path / "attention.pt").read_bytes()
    if damage == "missing":
        (tmp_path / "attention.pt").unlink()
    elif damage == "corrupted":
        (tmp_path / "attention.pt").write_bytes(good[: len(good) // 2])
    else:
        document = torch.load(tmp_path / "attention.pt", weights_only=True)
        (tmp_path / "attention.pt").write_bytes(golden.dumps(document["cases"], "0123456789abcdef"))
    with pytest.raises(handout.HandoutError, match=f"^{message}.*`python -m instructor golden`$"):
        handout.golden_files()


# In a copy of the handout: the attention part's public checks (on the stub: the golden data is read before the
# student's code is called) with its golden file missing, corrupted, then older than its checks; prints
# {damage: {check name: its output}} of the checks that read the file.
DAMAGED_GOLDEN = """
import json, torch
from pathlib import Path
from autograder.public import checker, golden
path = golden.path_of("attention")
good = path.read_bytes()
damages = {"missing": path.unlink, "corrupted": lambda: path.write_bytes(good[: len(good) // 2]),
           "stale": lambda: path.write_bytes(golden.dumps(torch.load(path, weights_only=True)["cases"], "0" * 16))}
found = {}
for damage, make in damages.items():
    path.write_bytes(good)
    make()
    report = checker.check(Path("."), parts=("attention",))
    found[damage] = {r.name: r.output for r in report.results if "golden" in r.output}
print(json.dumps(found))
"""


def test_a_bad_golden_file_in_the_handout_tells_the_student_what_to_do(built, student_python, tmp_path):
    """Where the kit's tooling is not at hand (the handout), a missing, corrupted or stale golden file fails the checks
    that read it with one line a student can act on: download the handout again, tell the course staff; never the
    instructor's command (the kit's own checker keeps it: test_a_bad_golden_file_stops_the_build_with_one_line)."""
    folder = copy_of(built[0], tmp_path / "captioning")
    done = run_in(folder, student_python, "-c", DAMAGED_GOLDEN)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    what = {
        "missing": r"is missing",
        "corrupted": r"is corrupted \(\w+\)",
        "stale": r"is older than the checks that read it \(fingerprint '0{16}', the checks' '[0-9a-f]{16}'\)",
    }
    for damage, pattern in what.items():
        assert sorted(found[damage]) == [
            "decoding_steps_reproduce_teacher_forcing",
            "forward_matches_the_reference_with_the_same_weights",
        ], found
        for output in found[damage].values():
            assert re.fullmatch(
                rf"autograder/public/golden/attention\.pt {pattern}: download the assignment's handout "
                r"again and check with the fresh copy; if the error stays, tell the course staff",
                output,
            ), output


def test_the_output_must_be_a_handout_or_new(tmp_path, built):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(handout.HandoutError, match="the folder holds files and is not a handout"):
        handout.write_folder({"README.md": b"x"}, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    with pytest.raises(handout.HandoutError, match=r"--zip .*: expected a file name ending in \.zip"):
        handout.write_zip({"README.md": b"x"}, tmp_path / "handout.tar")


# -- the notebooks' grader.check from the handout ------------------------------------------------------------------

KERNEL = "captionkit-handout-test"


@pytest.fixture(scope="session")
def student_kernel(student_python, tmp_path_factory) -> Path:
    """A folder of kernel specs holding one kernel: the student interpreter's (it cannot import the kit)."""
    specs = tmp_path_factory.mktemp("kernels")
    (specs / KERNEL).mkdir()
    (specs / KERNEL / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(student_python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "captionkit handout test",
                "language": "python",
            }
        )
    )
    return specs


def execute(nb, folder: Path, specs: Path, env: dict[str, str]):
    """Run `nb` with nbclient on the student kernel in `folder`; errors are kept as outputs."""
    return run_notebook(nb, folder=folder, specs=specs, kernel_name=KERNEL, env=env, timeout=CHECK_TIMEOUT)


def shown(cell) -> str:
    """What a code cell printed, returned or raised, as text."""
    parts = []
    for o in cell.outputs:
        if o.output_type == "stream":
            parts.append(o.text)
        elif o.output_type == "error":
            parts.append("\n".join(o.traceback))
        else:
            parts.append(o.get("data", {}).get("text/plain", ""))
    return "".join(parts)


@pytest.mark.parametrize("part", MODULES)
def test_grader_check_in_the_handouts_notebook(part, built, student_kernel, tmp_path):
    """The handout's notebook as shipped, run up to its first grader.check on the stub (every public check fails
    with one line per TODO, as `check` prints them); then the reference module is saved over the stub and grader.check runs again (all
    pass). The demos after the check are run with the kit's notebooks (tests/instructor/test_notebooks.py)."""
    import nbformat

    folder = copy_of(built[0], tmp_path / "captioning")
    nb = nbformat.read(folder / f"{part}.ipynb", as_version=4)
    call = f'grader.check("{part}")'
    first = next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and call in cell.source)
    reference = (ROOT / "solutions" / f"{part}.py").read_text(encoding="utf-8")
    nb.cells = nb.cells[: first + 1] + [
        nbformat.v4.new_code_cell(f"from pathlib import Path\nPath({part + '.py'!r}).write_text({reference!r});"),
        nbformat.v4.new_code_cell(call),
    ]
    env = student_env() | {"CAPTIONKIT_CACHE": str(tmp_path / "cache"), "IPYTHONDIR": str(tmp_path / "ipython")}
    nb = execute(nb, folder, student_kernel, env)

    errors = [
        f"cell {i}: {o.ename}: {o.evalue}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for o in cell.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    on_stub, on_reference = shown(nb.cells[first]), shown(nb.cells[-1])
    entries = rubric.load()[part]
    public = {e.number for e in entries.values() if e.visibility == "public"}
    points = sum(e.points for e in entries.values() if e.visibility == "public")
    assert on_stub.startswith(f"{part} results: 0 of {points:g} points from the public checks"), on_stub[:3000]
    waiting = {
        int(n.split(".")[1])
        for numbers in re.findall(
            rf"^    TODO [\w.]+ \({part}\.py:\d+\): \d+ checks? waits? for it \(([\d., ]+):", on_stub, re.M
        )
        for n in numbers.split(", ")
    }
    assert waiting == public, on_stub[:3000]
    assert f"{part} results: All test cases passed!" in on_reference, on_reference[:3000]
