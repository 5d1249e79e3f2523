"""The three zones of autograder/ (docs/grader.md) import only what their trust allows: every import of every
module, read with `ast` (lazy imports inside functions and importlib.import_module with a literal name included).

    worker/  runs beside student code: itself, shared/, torch, numpy, the standard library and pyseccomp (the
             binding of its seccomp filter, confine.py); nothing of the public checks, the grader, the reference
             solutions or the instructor's tools.
    public/  what a student may hold: itself, the worker zone, shared/ and third-party packages; never the grader,
             the reference solutions or the instructor's tools.
    shared/  ships into the worker's runtime and into the student handout: what the worker zone may import, plus
             the notebook's own packages (otter, matplotlib, IPython: shared/notebook.py, shared/plotting.py);
             never the grader, the public checks, the reference solutions or the instructor's tools.
"""

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STANDARD_LIBRARY = set(sys.stdlib_module_names) | {"__future__"}
KIT = ("autograder", "shared", "solutions", "assignments", "instructor", "tests", "benchmarks")


def imported_names(source: str, path: str) -> list[tuple[int, str]]:
    """(line, dotted module name) of every import in `source`: import statements anywhere in the module, and
    importlib.import_module / __import__ calls whose name is a literal (an f-string counts by its literal start)."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's own package
                package = Path(path).with_suffix("").parts[: -node.level]
                base = ".".join(package + ((node.module,) if node.module else ()))
            else:
                base = node.module
            found += [(node.lineno, base)]
        elif isinstance(node, ast.Call) and node.args and _is_dynamic_import(node.func):
            name = node.args[0]
            if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant):
                name = name.values[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.append((node.lineno, name.value))
    return found


def _is_dynamic_import(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
    )


def _within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def worker_may_import(name: str) -> bool:
    top = name.split(".")[0]
    return (
        _within(name, "autograder.worker", "shared", "torch", "numpy", "pyseccomp")
        or name == "autograder"
        or (top in STANDARD_LIBRARY and top not in KIT)
    )


def public_may_import(name: str) -> bool:
    top = name.split(".")[0]
    if top in KIT:
        return _within(name, "autograder.public", "autograder.worker", "shared") or name == "autograder"
    return True


NOTEBOOK_PACKAGES = ("otter", "matplotlib", "IPython")


def shared_may_import(name: str) -> bool:
    return worker_may_import(name) or _within(name, *NOTEBOOK_PACKAGES)


RULES = {"autograder/worker": worker_may_import, "autograder/public": public_may_import, "shared": shared_may_import}


def rule_for(path: str):
    """The rule of the zone a module (path relative to the kit root) lies in."""
    return next(rule for zone, rule in RULES.items() if path.startswith(zone + "/"))


def crossings(zone: str, allowed) -> list[str]:
    """'file:line imports name' for every import of a module under `zone` that `allowed` refuses."""
    bad = []
    for path in sorted((ROOT / zone).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, name in imported_names(path.read_text(), rel):
            if not allowed(name):
                bad.append(f"{rel}:{line} imports {name}")
    return bad


@pytest.mark.parametrize("zone", sorted(RULES))
def test_zone_imports_stay_inside_its_trust(zone):
    assert (ROOT / zone).is_dir() and any((ROOT / zone).rglob("*.py")), f"{zone}: no modules to check"
    assert crossings(zone, RULES[zone]) == []


@pytest.mark.parametrize(
    "source, zone, crossing",
    [
        ("from autograder.grader.context import hidden_seed\n", "autograder/worker", "autograder.grader.context"),
        ("import solutions.decoding\n", "autograder/worker", "solutions.decoding"),
        (
            "def f():\n    from autograder.public.compare import expect\n",
            "autograder/worker",
            "autograder.public.compare",
        ),
        ("import hypothesis\n", "autograder/worker", "hypothesis"),
        ("from ..grader import engine\n", "autograder/public", "autograder.grader"),
        (
            "import importlib\nimportlib.import_module(f'autograder.grader.checks.{part}')\n",
            "autograder/public",
            "autograder.grader.checks.",
        ),
        ("from solutions import bleu as reference\n", "autograder/public/checks", "solutions"),
        ("from instructor.stubs import generate_stubs\n", "autograder/public", "instructor.stubs"),
        ("from autograder.grader.context import hidden_seed\n", "shared", "autograder.grader.context"),
        ("def f():\n    from solutions.bleu import bleu\n", "shared", "solutions.bleu"),
        ("import instructor.reproduce\n", "shared", "instructor.reproduce"),
        ("from autograder.public.compare import expect_close\n", "shared", "autograder.public.compare"),
        ("import hypothesis\n", "shared", "hypothesis"),
    ],
)
def test_a_crossing_is_found(source, zone, crossing):
    """Each kind of crossing the rules forbid, planted in a module of the zone, is reported."""
    path = f"{zone}/planted.py"
    names = [name for _, name in imported_names(source, path)]
    assert crossing in names and not rule_for(path)(crossing)


def test_every_part_has_its_public_checks_in_the_public_zone_and_none_imports_a_reference():
    """autograder/public/checks/<part>.py, or the package autograder/public/checks/<part>/, exists for every part;
    importing `solutions` there is an error (the planted case above shows that it is found)."""
    from shared.parts import MODULES

    checks = ROOT / "autograder" / "public" / "checks"
    for part in MODULES:
        module, package = checks / f"{part}.py", checks / part
        paths = [module] if module.is_file() else sorted(package.rglob("*.py"))
        assert paths and (module.is_file() or (package / "__init__.py").is_file()), f"{part}: no public checks module"
        for path in paths:
            names = [name for _, name in imported_names(path.read_text(), path.relative_to(ROOT).as_posix())]
            assert not [n for n in names if _within(n, "solutions")], f"{part}: a public check imports a reference"


def test_what_the_zones_may_import_is_allowed():
    assert all(
        worker_may_import(n)
        for n in (
            "autograder.worker.protocol",
            "shared.vocab",
            "torch.nn",
            "numpy",
            "os",
            "importlib.util",
            "__future__",
        )
    )
    assert all(
        public_may_import(n)
        for n in (
            "autograder.worker.protocol",
            "autograder.public.compare",
            "hypothesis",
            "jsonschema",
            "shared.parts",
            "torch",
        )
    )
    assert all(
        shared_may_import(n)
        for n in ("shared.vocab", "torch.nn", "numpy", "matplotlib.pyplot", "otter", "IPython", "hashlib")
    )


# -- no import circle ----------------------------------------------------------------------------------------------


def _kit_imports(source: str, path: str, modules: set[str]) -> set[str]:
    """The kit's modules that `source` imports anywhere (functions included), but under `if TYPE_CHECKING:`: a name
    `from package import name` counts as the module package.name where there is one."""
    tree = ast.parse(source, path)
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        for statement in node.body
        for n in ast.walk(statement)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                for a in node.names
                if f"{node.module}.{a.name}" in modules or node.module in modules
            }
    return found


def import_cycle(sources: dict[str, str]) -> tuple[str, ...] | None:
    """A circle of imports among `sources` ({dotted module name: its source}), or None."""
    import graphlib

    modules = set(sources)
    graph = {name: _kit_imports(text, name, modules) - {name} for name, text in sources.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        return tuple(exc.args[1])
    return None


def kit_sources() -> dict[str, str]:
    sources = {}
    for path in sorted([*(ROOT / "autograder").rglob("*.py"), *(ROOT / "shared").glob("*.py")]):
        parts = path.relative_to(ROOT).with_suffix("").parts
        sources[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text()
    return sources


def test_no_module_of_the_kit_imports_itself_back_even_lazily():
    assert import_cycle(kit_sources()) is None


def test_an_import_circle_is_found_even_inside_a_function():
    planted = {
        "kit.a": "from kit import b\n",
        "kit.b": "def f():\n    from kit.c import g\n",
        "kit.c": "import kit.a\n",
        "kit": "",
    }
    assert set(import_cycle(planted)) == {"kit.a", "kit.b", "kit.c"}
    assert (
        import_cycle({**planted, "kit.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import kit.a\n"})
        is None
    )


# -- What ships where (autograder/public/manifest.py) -------------------------------------------------------------


def _zones_of(relative: str) -> list[str]:
    from fnmatch import fnmatch

    from autograder.public import manifest

    def matches(pattern: str) -> bool:
        if "**" in pattern:  # pathlib's "a/**/*.py": a/*.py and any depth below a/
            head, _, tail = pattern.partition("/**/")
            return relative.startswith(head + "/") and fnmatch(relative.rsplit("/", 1)[-1], tail)
        return fnmatch(relative, pattern) and relative.count("/") == pattern.count("/")

    return [zone for zone, patterns in manifest.ZONES.items() if any(matches(p) for p in patterns)]


def test_every_file_of_the_package_belongs_to_exactly_one_zone():
    """A file the manifest does not place ships nowhere (and a test of it would pass on a checkout only); a file in
    two zones would ship wherever either goes."""
    kit = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "autograder").rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and not p.name.startswith(".")
    ]
    placed = {path: _zones_of(path) for path in kit}
    assert len(kit) > 100
    assert {path: zones for path, zones in placed.items() if len(zones) != 1} == {}


def test_a_new_file_lands_where_its_zone_goes_and_nowhere_else(tmp_path):
    from autograder.public import manifest

    for relative in ("autograder/grader/checks/new_part.py", "autograder/public/checks/new_part.py"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    (tmp_path / "autograder/public/__pycache__").mkdir()
    (tmp_path / "autograder/public/__pycache__/checker.py").write_text("")
    where = {
        d: {p.relative_to(tmp_path).as_posix() for p in manifest.files(d, tmp_path)} for d in manifest.DESTINATIONS
    }
    assert (
        where["gradescope"]
        == where["fingerprint"]
        == {
            "autograder/grader/checks/new_part.py",
            "autograder/public/checks/new_part.py",
        }
    )
    assert where["handout"] == {"autograder/public/checks/new_part.py"}
    assert where["runtime"] == set()


def test_the_handout_and_the_runtime_copy_hold_no_grader_or_solution_file():
    from autograder.public import manifest

    for destination in ("handout", "runtime"):
        for path in manifest.files(destination):
            assert set(_zones_of(path.relative_to(ROOT).as_posix())) <= {"worker", "public", "shared"}, path
    assert not {"grader", "solutions"} & set(manifest.DESTINATIONS["handout"] + manifest.DESTINATIONS["runtime"])


def test_every_place_that_packs_the_kit_reads_the_manifest():
    import tomllib

    from autograder.grader import gradescope
    from autograder.public import manifest
    from autograder.public.client import RUNTIME_FILES
    from instructor import handout

    assert RUNTIME_FILES == manifest.patterns("runtime")
    assert handout.CODE == manifest.patterns("handout")
    assert set(handout._code()) == {p.relative_to(ROOT).as_posix() for p in manifest.files("handout")}
    assert gradescope.source_files() == manifest.files("gradescope")
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert sorted(package_data["autograder"]) == sorted(manifest.PACKAGE_DATA)


def test_a_batch_fingerprint_covers_what_the_manifest_says_decides_a_grade(tmp_path, monkeypatch):
    """Golden data decides a public check's expected values: a batch worker whose copy differs must refuse."""
    from autograder.grader import batch_jobs

    (tmp_path / "autograder/public/golden").mkdir(parents=True)
    (tmp_path / "autograder/public/golden/bleu.pt").write_bytes(b"one")
    monkeypatch.setattr(batch_jobs, "ROOT", tmp_path)
    before = batch_jobs.kit_fingerprint()
    (tmp_path / "autograder/public/golden/bleu.pt").write_bytes(b"two")
    after = batch_jobs.kit_fingerprint()
    assert after != before
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_new.py").write_text("")  # the kit's tests decide no grade
    assert batch_jobs.kit_fingerprint() == after


MOST_LINES = 450  # a module read in one sitting


def test_no_module_of_the_kit_is_longer_than_one_sitting():
    """Every module of autograder/ holds one concept, short enough to read at once: a longer one is split by concept
    (a package where its parts belong together, as autograder/public/checks/show_and_tell/)."""
    lengths = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for path in sorted((ROOT / "autograder").rglob("*.py"))
        if "__pycache__" not in path.parts
    }
    assert len(lengths) > 100
    assert {path: n for path, n in lengths.items() if n > MOST_LINES} == {}
