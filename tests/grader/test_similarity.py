"""The similarity report: a planted copy (variables renamed, functions reordered) is found in every part; independent
correct implementations of the same function are not flagged beyond what the shared stub explains; the command
writes a staff-only report and CSV, linked from summary.html, that render in headless Chromium."""

import ast
import csv
import re
import zipfile
from pathlib import Path

import pytest

from autograder.grader import similarity
from autograder.grader.cli import main
from autograder.grader.report import write_summary
from shared.parts import MODULES
from tests.meta.variants import Variant, all_variants

ROOT = Path(__file__).resolve().parents[2]


def reference(part: str) -> str:
    return (ROOT / "solutions" / f"{part}.py").read_text()


def stub(part: str) -> str:
    return (ROOT / "assignments" / f"{part}.py").read_text()


def functions(text: str) -> dict[str, tuple[int, int]]:
    """{qualified name: (first line, last line)}, 1-based with decorators, of every function and method."""
    found = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not isinstance(child, ast.ClassDef):
                    found[prefix + child.name] = (
                        min([d.lineno for d in child.decorator_list] + [child.lineno]),
                        child.end_lineno,
                    )
                visit(child, prefix + child.name + ".")

    visit(ast.parse(text), "")
    return found


def edited_function(variant: Variant) -> str:
    """The innermost function of the reference that the variant's edit falls in."""
    text = reference(variant.part)
    line = text[: text.index(variant.old)].count("\n") + 1
    spans = {name: s for name, s in functions(text).items() if s[0] <= line <= s[1]}
    return min(spans, key=lambda name: spans[name][1] - spans[name][0])


def with_function(part: str, source: str, name: str) -> str:
    """The part's stub with function `name` as `source` writes it: a student who wrote that one TODO."""
    (s0, s1), (r0, r1) = functions(stub(part))[name], functions(source)[name]
    given, written = stub(part).splitlines(True), source.splitlines(True)
    return "".join(given[: s0 - 1] + written[r0 - 1 : r1] + given[s1:])


def body_lines(text: str, name: str) -> set[str]:
    """The code lines of function `name`'s body after its docstring (comments and blank lines left out)."""
    start, end = functions(text)[name]
    [node] = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.end_lineno == end]
    body = (
        node.body[1:]
        if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        else node.body
    )
    first = body[0].lineno if body else end + 1
    return {
        line.strip() for line in text.splitlines()[first - 1 : end] if line.strip() and not line.strip().startswith("#")
    }


def rewrites(variant: Variant) -> bool:
    """A correct alternative that writes its function anew: at most a quarter of the reference's lines kept."""
    name, alternative = edited_function(variant), variant.apply(reference(variant.part))
    kept = body_lines(reference(variant.part), name) & body_lines(alternative, name)
    return 4 * len(kept) <= len(body_lines(reference(variant.part), name))


def renamed_locals(text: str) -> str:
    """`text` with every local variable of every function renamed where the function uses it (its signature, the
    given code, kept as it was): what a student does to a copied module."""
    import io
    import tokenize

    lines = text.splitlines(True)
    spans = []  # (first line, last line, {local name: new name})
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
            stored = sorted(
                {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - args
            )
            spans.append((node.body[0].lineno, node.end_lineno, {n: f"renamed_{n}_{len(spans)}" for n in stored}))
    edits = []  # (line, start column, end column, new text), applied right to left
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME or (i and tokens[i - 1].string == "."):
            continue
        for first, last, names in spans:
            if first <= tok.start[0] <= last and tok.string in names:
                edits.append((tok.start[0], tok.start[1], tok.end[1], names[tok.string]))
                break
    for row, a, b, new in sorted(edits, reverse=True):
        lines[row - 1] = lines[row - 1][:a] + new + lines[row - 1][b:]
    return "".join(lines)


def reordered_functions(text: str) -> str:
    """`text` with its top-level functions (decorators included) in reverse order, everything else in place."""
    lines = text.splitlines(True)
    blocks = [
        (min([d.lineno for d in n.decorator_list] + [n.lineno]) - 1, n.end_lineno)
        for n in ast.parse(text).body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    moved = iter(["".join(lines[a:b]) for a, b in reversed(blocks)])
    out, at = [], 0
    for a, b in blocks:
        out += ["".join(lines[at:a]), next(moved)]
        at = b
    return "".join(out + lines[at:])


def disguised(text: str) -> str:
    return reordered_functions(renamed_locals(text))


@pytest.mark.parametrize("part", MODULES)
def test_a_copy_with_renamed_variables_and_reordered_functions_is_found(part):
    copy = disguised(reference(part))
    assert "renamed_" in copy and copy != reference(part)
    ast.parse(copy)
    names = [n.name for n in ast.parse(copy).body if isinstance(n, ast.FunctionDef)]
    assert names == [n.name for n in ast.parse(reference(part)).body if isinstance(n, ast.FunctionDef)][::-1]
    pairs = {
        (p.a, p.b): p
        for p in similarity.compare(part, {"reference": reference(part), "copy": copy, "stub": stub(part)})
    }
    found = pairs[("copy", "reference")]
    # Each moved function loses the fingerprints that spanned its old neighbours: the score stays far above the bar.
    assert found.score >= 0.8 and found.score >= similarity.THRESHOLD, found
    # The stub is all given code: it matches no one, whatever it shares with them.
    assert pairs[("copy", "stub")].score == pairs[("reference", "stub")].score == 0.0


def independent_pairs() -> list[tuple[str, str, str, str]]:
    """(part, function, the reference's version, a correct alternative's) for each alternative that writes its
    function anew, each on the part's stub: two students who wrote the same TODO independently."""
    found = []
    for variant in all_variants():
        if variant.correct and rewrites(variant):
            name = edited_function(variant)
            found.append(
                (
                    variant.part,
                    name,
                    with_function(variant.part, reference(variant.part), name),
                    with_function(variant.part, variant.apply(reference(variant.part)), name),
                )
            )
    return found


def test_independent_correct_implementations_are_not_flagged_beyond_the_stub(tmp_path):
    pairs = independent_pairs()
    assert len(pairs) >= 10 and len({part for part, *_ in pairs}) >= 4, [(p, f) for p, f, *_ in pairs]
    empty = tmp_path / "no-stubs"  # the same comparison with nothing given: the stub's code counts
    empty.mkdir()
    for part in MODULES:
        (empty / f"{part}.py").write_text("")
    with_stub, without = [], []
    for part, name, ours, theirs in pairs:
        [p] = similarity.compare(part, {"a": ours, "b": theirs})
        [q] = similarity.compare(part, {"a": ours, "b": theirs}, stubs=empty)
        with_stub.append((part, name, round(p.score, 2)))
        without.append(round(q.score, 2))
    assert all(score < similarity.THRESHOLD for _, _, score in with_stub), with_stub
    # What the stub explains: counted as the students' own code, it would flag every one of these pairs.
    assert all(score >= similarity.THRESHOLD for score in without), without


@pytest.fixture
def class_folder(tmp_path):
    """SUBMISSIONS: alice (the reference bleu.py), bob.zip (alice's copied, disguised), carol (the stub), and dave
    (the reference's attention.py only); DIR with a summary.html from an earlier batch."""
    root = tmp_path / "submissions"
    for name, files in {
        "alice": {"bleu.py": reference("bleu")},
        "carol": {"bleu.py": stub("bleu")},
        "dave": {"attention.py": reference("attention")},
    }.items():
        (root / name).mkdir(parents=True)
        for file, text in files.items():
            (root / name / file).write_text(text)
    with zipfile.ZipFile(root / "bob.zip", "w") as zf:
        zf.writestr("work/bleu.py", disguised(reference("bleu")))
    out = tmp_path / "out"
    out.mkdir()
    write_summary([], out)
    return root, out


def test_the_command_writes_a_staff_only_report_linked_from_the_summary(class_folder, tmp_path):
    from tests import browser

    root, out = class_folder
    assert "similarity.html" not in (out / "summary.html").read_text()
    assert main(["similarity", str(root), "--out", str(out)]) == 0
    with open(out / "similarity.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    bleu = {(r["a"], r["b"]): float(r["score"]) for r in rows if r["part"] == "bleu"}
    assert set(bleu) == {("alice", "bob"), ("alice", "carol"), ("bob", "carol")}, bleu
    assert bleu[("alice", "bob")] >= 0.9 and bleu[("alice", "carol")] == bleu[("bob", "carol")] == 0.0
    assert not [r for r in rows if r["part"] == "attention"]  # one module: no pair
    report = (out / "similarity.html").read_text()
    assert re.findall(r'data-pair="([^"]*)"', report) == ["alice|bob"]
    assert report.count("<mark>") > 10 and '<section class="part" id="bleu" data-flagged="1">' in report
    assert '<a href="similarity.html">Similarity report</a>' in (out / "summary.html").read_text()
    for path in (out / "similarity.html", out / "similarity.csv"):
        assert path.stat().st_mode & 0o077 == 0, path
    assert not list(out.glob("*/similarity*"))  # nothing in a submission's own folder
    rendered = browser.render(out / "similarity.html", tmp_path)
    assert rendered.get("data-rendered") == "ok", rendered
    rendered = browser.render(out / "summary.html", tmp_path)
    assert rendered.get("data-rendered") == "ok", rendered


def test_marks_stay_within_lines_and_far_lines_are_elided():
    text = "\n".join(f"line {i} <x>" for i in range(20))
    start = text.index("line 10")
    shown = similarity.marked(text, [(start, start + 20), (start + 5, start + 9)], context=1)
    assert shown.split("\n") == [
        "…",
        "line 9 &lt;x&gt;",
        "<mark>line 10 &lt;x&gt;</mark>",
        "<mark>line 11 </mark>&lt;x&gt;",
        "line 12 &lt;x&gt;",
        "…",
    ]
    with pytest.raises(SystemExit):
        main(["similarity", "nowhere", "--out", "x", "--threshold", "2"])


def test_the_same_modules_score_the_same_in_every_process(class_folder, tmp_path):
    """copydetect's own k-gram hash is Python's hash(), salted per process: the kit's is not."""
    import os
    import subprocess
    import sys

    root, _ = class_folder
    tables = []
    for seed in ("1", "2"):
        out = tmp_path / f"run{seed}"
        subprocess.run(
            [sys.executable, "-m", "autograder", "similarity", str(root), "--out", str(out)],
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
        )
        tables.append((out / "similarity.csv").read_text())
    assert tables[0] == tables[1] and "alice,bob" in tables[0]
