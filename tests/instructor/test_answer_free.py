"""The handout holds no answer, proven mechanically (docs/handout.md, "Why the handout holds no answer").

1. Substitution. Every function, method and class of what a student receives (the handout's public checks, golden
   helpers, worker, shared modules, the given code of every stub, the notebooks' code cells and otter tests) whose
   signature fits a graded function or method (a TODO of a stub: `binding`) is dropped in as the student's
   implementation of it, and the submission is graded by the grader itself (autograder.grader.engine.grade, that part
   only, training left out): no check may earn more than with no answer (the stub, or every TODO returning None). A
   candidate is pasted as a student would paste it: its source and what it needs of its module (and of the public
   modules it imports), under fresh names, called from the TODO with the graded function's arguments, bound by name
   first. The candidates of one handout module are graded together (helpers that compose into an answer), and the
   rounds of different modules that fill different TODOs share a submission (`rounds` says why that hides nothing).
   A control pastes the reference's own functions the same way: they must pass every public check. The table of the
   candidates, how each was bound and what each submission earned is printed (pytest shows it with a failure).
2. Leak scan (instructor/leak_scan.py). No run of three consecutive non-trivial lines of a solution region, names
   normalised, is in the handout, the nbgrader release or the Gradescope zip's files that student code can read; no
   staff-only file of the instructor tree (a `rubrics` folder, a file marked staff-only) is in the handout or the
   release.
Both are shown to catch what they are for on planted copies (the last two tests).
"""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from instructor import leak_scan
from shared.parts import MODULES

ROOT = Path(__file__).resolve().parents[2]
# A candidate parameter with one of these names, in a graded method, is handed the student's object / its weights.
OBJECT_NAMES = ("self", "model", "module", "net", "captioner")
WEIGHT_NAMES = ("weights", "state_dict", "params", "parameters", "state")
# Modules a student's module can import in the worker: the rest of the handout's code is inlined into the paste.
IMPORTABLE = ("shared", "autograder.worker")


# -- what is graded ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A graded function or method: a TODO of a stub."""

    part: str
    qualname: str  # "AttnCaptioner.forward"
    params: tuple[str, ...]  # as the grader calls it, without self
    required: tuple[str, ...]  # those without a default
    method: bool
    attributes: frozenset[str]  # a method's object: what the stub's class sets or defines (self.<name>)
    todo_line: int  # the stub's "# TODO" line (the raise follows it)

    @property
    def name(self) -> str:
        return f"{self.part}.{self.qualname}"


def _arguments(args: ast.arguments) -> list[tuple[str, bool]]:
    """(name, has a default) of each positional or keyword parameter, in order."""
    positional = args.posonlyargs + args.args
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    return list(zip([a.arg for a in positional], defaults)) + [
        (a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]


def _class_attributes(cls: ast.ClassDef) -> set[str]:
    """The names `self.<name>` means on an instance of `cls`: its methods and what its methods assign on self."""
    found = {node.name for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            found.add(node.attr)
    return found


def targets(stubs: dict[str, str]) -> list[Target]:
    """Every TODO of the stubs {module: text}."""
    found = []
    for part, text in stubs.items():
        tree = ast.parse(text)
        lines = text.split("\n")
        for node in tree.body:
            if not isinstance(node, ast.ClassDef | ast.FunctionDef):
                continue
            scopes = (
                [(node, None)]
                if isinstance(node, ast.FunctionDef)
                else [(f, node) for f in node.body if isinstance(f, ast.FunctionDef)]
            )
            for fn, cls in scopes:
                todo = next(
                    (n for n in range(fn.lineno, fn.end_lineno + 1) if lines[n - 1].strip().startswith("# TODO (Part")),
                    None,
                )
                if todo is None:
                    continue
                params = _arguments(fn.args)[1 if cls else 0 :]
                found.append(
                    Target(
                        part,
                        f"{cls.name}.{fn.name}" if cls else fn.name,
                        tuple(name for name, _ in params),
                        tuple(name for name, default in params if not default),
                        cls is not None,
                        frozenset(_class_attributes(cls)) if cls else frozenset(),
                        todo,
                    )
                )
    return sorted(set(found), key=lambda t: (MODULES.index(t.part), t.todo_line))


# -- what a student holds: the handout's code, module by module --------------------------------------------------


@dataclass
class Module:
    """One source of candidates: a module of the handout, or a notebook's code cells (one namespace)."""

    key: str  # its path in the handout
    dotted: str | None  # its import name, where it has one ("autograder.public.checks.bleu")
    tree: ast.Module
    definitions: dict[str, ast.stmt] = field(default_factory=dict)  # module-level name -> the statement binding it


def _without_magics(source: str) -> str:
    return "\n".join(line for line in source.split("\n") if not line.lstrip().startswith(("%", "!")))


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[stmt.name] = stmt
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                found[(alias.asname or alias.name).split(".")[0]] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        found.setdefault(node.id, stmt)
    return found


def handout_modules(files: dict[str, bytes]) -> dict[str, Module]:
    """{key: Module} of every Python file and notebook of the handout (`files`: instructor.handout.build())."""
    modules = {}
    for path, data in files.items():
        if path.endswith(".py"):
            source = data.decode()
            dotted = (
                path[:-3].replace("/", ".").removesuffix(".__init__")
                if path.startswith(("autograder/", "shared/"))
                else None
            )
        elif path.endswith(".ipynb"):
            cells = [c for c in json.loads(data)["cells"] if c["cell_type"] == "code"]
            source, dotted = "\n\n".join(_without_magics("".join(c["source"])) for c in cells), None
        else:
            continue
        tree = ast.parse(source)
        modules[path] = Module(path, dotted, tree, _definitions(tree))
    return modules


# -- candidates ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    module: str  # the handout path it comes from
    qualname: str  # "_ngrams", "_Oracle.forward", "SoftAttention" (a class: its constructor)
    kind: str  # "function", "method", "class"
    params: tuple[tuple[str, bool], ...]  # (name, has a default), a method's self left out

    @property
    def name(self) -> str:
        return f"{self.module}:{self.qualname}"


def _is_todo(fn: ast.FunctionDef) -> bool:
    """A graded function of a stub: its body raises the stub's NotImplementedError."""
    return any(isinstance(node, ast.Raise) and "is not implemented yet" in ast.unparse(node) for node in ast.walk(fn))


def candidates(modules: dict[str, Module]) -> list[Candidate]:
    """Every module-level function and class and every method of the handout, but the stubs' TODOs themselves."""
    found = []
    for module in modules.values():
        for stmt in module.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_todo(stmt):
                found.append(Candidate(module.key, stmt.name, "function", tuple(_arguments(stmt.args))))
            elif isinstance(stmt, ast.ClassDef):
                init = next((f for f in stmt.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
                found.append(
                    Candidate(module.key, stmt.name, "class", tuple(_arguments(init.args)[1:]) if init else ())
                )
                for fn in stmt.body:
                    if (
                        isinstance(fn, ast.FunctionDef)
                        and not _is_todo(fn)
                        and fn.args.args
                        and not (fn.name.startswith("__") and fn.name.endswith("__"))
                        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
                    ):
                        found.append(
                            Candidate(module.key, f"{stmt.name}.{fn.name}", "method", tuple(_arguments(fn.args)[1:]))
                        )
    return found


def binding(target: Target, candidate: Candidate) -> list[tuple[str, str]] | None:
    """[(candidate parameter, the expression passed to it)] when `candidate` fits `target`, else None. A method
    candidate fits a graded method only (its self is the student's object). It must name at least one parameter as
    the graded function does, every input the grader always passes must go to it, and nothing it requires may be
    left without a value."""
    if candidate.kind == "method" and not target.method:
        return None
    unused = [name for name in target.params if name not in dict(candidate.params)]
    by_name, in_order = [], []
    for name, has_default in candidate.params:
        if name in target.params:
            by_name.append((name, name))
        elif target.method and name in OBJECT_NAMES:
            by_name.append((name, "self"))
        elif target.method and name in WEIGHT_NAMES:
            by_name.append((name, "self.state_dict()"))
        elif target.method and name in target.attributes:
            by_name.append((name, f"self.{name}"))
        else:
            in_order.append((name, has_default))
    # A parameter named otherwise is given a graded input only when the two take as many inputs (a paste that renames)
    if in_order and len(by_name) + len(in_order) - sum(v.startswith("self") for _, v in by_name) != len(target.params):
        in_order = [(name, has_default) for name, has_default in in_order if not has_default]
        if in_order:
            return None
    for name, has_default in in_order:
        if unused:
            by_name.append((name, unused.pop(0)))
        elif not has_default:
            return None
    used = {value for _, value in by_name}
    if set(target.required) - used:
        return None
    if not any(param == value and param in target.params for param, value in by_name):
        return None
    return by_name


def rank(target: Target, candidate: Candidate, bound: list[tuple[str, str]]) -> tuple:
    """Best fits first: the most parameters bound by name, then a name like the graded one's."""
    by_name = sum(param == value or value.startswith("self") for param, value in bound)
    word = target.qualname.split(".")[-1].strip("_")
    alike = word in candidate.qualname or candidate.qualname.split(".")[-1].strip("_") in word
    return (-by_name, not alike, len(candidate.params) != len(target.params), candidate.name)


# -- pasting a candidate as a student would --------------------------------------------------------------------------


def _locals(fn: ast.FunctionDef | ast.Lambda) -> set[str]:
    """The names `fn` binds itself (parameters, assignments, nested definitions), less those it declares global."""
    args = fn.args
    found = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    found |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    declared = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, ast.alias):
                found.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                found.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared |= set(node.names)
    return found - declared


class _Renamer(ast.NodeTransformer):
    """Rename the module-level names of `mapping` wherever they are not shadowed by a local of a function."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping, self.shadowed = mapping, [set()]

    def _scope(self, node, names: set[str]):
        self.shadowed.append(self.shadowed[-1] | names)
        self.generic_visit(node)
        self.shadowed.pop()
        return node

    def visit_FunctionDef(self, node):
        return self._scope(node, _locals(node))

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        return self._scope(node, _locals(node))

    def visit_ClassDef(self, node):
        own = {
            n.id
            for s in node.body
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        return self._scope(node, own)

    def visit_Name(self, node):
        if node.id in self.mapping and node.id not in self.shadowed[-1]:
            node.id = self.mapping[node.id]
        return node


def _free_names(stmt: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(stmt) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


class Paste:
    """The code a student pastes for some candidates: each candidate's definition and what it needs of its module
    (and of the public modules that module imports from), under fresh names, dependencies first."""

    def __init__(self, modules: dict[str, Module], prefix: str):
        self.modules, self.prefix = modules, prefix
        self.by_dotted = {m.dotted: m for m in modules.values() if m.dotted}
        self.names: dict[tuple[str, str], str] = {}
        self.statements: list[str] = []

    def _fresh(self, module: Module, name: str) -> str:
        new = f"_{self.prefix}{len(self.names)}_{name}"
        self.names[(module.key, name)] = new
        return new

    def _source_module(self, module: Module, stmt: ast.ImportFrom) -> Module | None:
        """The handout module `stmt` imports from, when the student's module could not import it in the worker."""
        if stmt.level:
            base = (module.dotted or "").split(".")[: -stmt.level] if module.dotted else []
            dotted = ".".join(base + ([stmt.module] if stmt.module else []))
        else:
            dotted = stmt.module or ""
        if dotted.startswith(IMPORTABLE):
            return None
        return self.by_dotted.get(dotted)

    def need(self, module: Module, name: str) -> str | None:
        """The fresh name of `name` of `module`, pasting its definition first; None when it is not the module's."""
        if (module.key, name) in self.names:
            return self.names[(module.key, name)]
        stmt = module.definitions.get(name)
        if stmt is None:
            return None
        if isinstance(stmt, ast.ImportFrom):
            alias = next(a for a in stmt.names if (a.asname or a.name) == name)
            source = self._source_module(module, stmt)
            if source is not None:
                inner = self.need(source, alias.name)
                if inner is None and source.dotted and alias.name != "*":  # a submodule of a package
                    inner = self.need(self.by_dotted.get(f"{source.dotted}.{alias.name}", source), alias.name)
                self.names[(module.key, name)] = inner
                return inner
            new = self._fresh(module, name)
            self.statements.append(ast.unparse(ast.ImportFrom(stmt.module, [ast.alias(alias.name, new)], stmt.level)))
            return new
        if isinstance(stmt, ast.Import):
            alias = next(a for a in stmt.names if (a.asname or a.name).split(".")[0] == name)
            new = self._fresh(module, name)
            if alias.asname or "." not in alias.name:
                self.statements.append(f"import {alias.name} as {new}")
            else:  # `import a.b` binds `a`, with a.b loaded
                self.statements.append(f"import {alias.name}\nimport {alias.name.split('.')[0]} as {new}")
            return new
        return self._paste(module, stmt, [name])

    def _paste(self, module: Module, stmt: ast.stmt, names: list[str]) -> str:
        """Paste `stmt` (a definition or an assignment of module `module`) under fresh names for `names`."""
        bound = names
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            bound = sorted({n for n, s in module.definitions.items() if s is stmt})
        for n in bound:
            self._fresh(module, n)
        mapping = {n: self.names[(module.key, n)] for n in bound}
        for free in sorted(_free_names(stmt) - set(bound)):
            new = self.need(module, free)
            if new is not None:
                mapping[free] = new
        stmt = _Renamer(mapping).visit(copy.deepcopy(stmt))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stmt.name = mapping.get(stmt.name, stmt.name)
        self.statements.append(ast.unparse(ast.fix_missing_locations(stmt)))
        return self.names[(module.key, names[0])]

    def candidate(self, candidate: Candidate) -> str:
        """Paste `candidate`; return the name to call it by (a method is pasted as a function of its object)."""
        module = self.modules[candidate.module]
        if candidate.kind != "method":
            return self.need(module, candidate.qualname)
        cls_name, method = candidate.qualname.split(".")
        cls = module.definitions[cls_name]
        fn = next(f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == method)
        key = f"{cls_name}.{method}"
        if (module.key, key) in self.names:
            return self.names[(module.key, key)]
        new = self._fresh(module, key.replace(".", "_"))
        self.names[(module.key, key)] = new
        mapping = {}
        for free in sorted(_free_names(fn)):
            found = self.need(module, free)
            if found is not None:
                mapping[free] = found
        fn = _Renamer(mapping).visit(copy.deepcopy(fn))
        fn.name, fn.decorator_list = new, []
        self.statements.append(ast.unparse(ast.fix_missing_locations(fn)))
        return new

    def text(self) -> str:
        """The pasted code, in a try block: a candidate that cannot even be defined in the worker fails its own
        calls (a NameError), never the module's import, and so never another candidate's checks."""
        body = "\n".join(self.statements) or "pass"
        return "try:\n" + textwrap.indent(body, "    ") + "\nexcept BaseException:\n    pass\n"


def submission(
    stub: str, choices: dict[Target, tuple[Candidate, list[tuple[str, str]]]], modules: dict[str, Module]
) -> str:
    """The stub with each target of `choices` answered by a call of its candidate (bound as `binding` says)."""
    lines = stub.split("\n")
    tail = []
    for i, (target, (candidate, bound)) in enumerate(sorted(choices.items(), key=lambda kv: -kv[0].todo_line)):
        paste = Paste(modules, f"c{i}_")
        called = paste.candidate(candidate)
        tail.append(paste.text())
        arguments = ", ".join(f"{param}={value}" for param, value in bound)
        if candidate.kind == "method":
            arguments = ", ".join(["self", arguments]) if arguments else "self"
        todo = lines[target.todo_line - 1]
        indent = todo[: len(todo) - len(todo.lstrip())]
        lines[target.todo_line - 1] = f"{indent}# {candidate.name}"
        lines[target.todo_line] = f"{indent}return {called}({arguments})"
    return "\n".join(lines) + "\n\n\n# -- pasted from the handout --\n" + "\n".join(reversed(tail))


# -- grading ---------------------------------------------------------------------------------------------------------

Choice = dict[Target, tuple[Candidate, list[tuple[str, str]]]]


def fits(part_targets: list[Target], pool: list[Candidate]) -> dict[Target, list[tuple[Candidate, list]]]:
    """{target: [(candidate, binding)] best first} of every candidate that fits each target."""
    found = {}
    for target in part_targets:
        fitting = [(c, b) for c in pool if (b := binding(target, c)) is not None]
        found[target] = sorted(fitting, key=lambda cb: rank(target, *cb))
    return found


def rounds(fitting: dict[Target, list[tuple[Candidate, list]]]) -> list[Choice]:
    """The submissions of a part. For each handout module, its candidates are graded together, so that helpers of one
    module that compose into an answer meet: its round j fills each TODO it has candidates for with its j-th (or its
    first, when it has fewer). Rounds of different modules that fill different TODOs share a submission: a check
    that a candidate would earn alone, every other TODO unwritten, calls no other TODO (it would raise there), so the
    other candidates of its submission cannot change its verdict, and each candidate's pasted code sits in a try
    block of its own (Paste.text), so one that fails when defined breaks no other. Every candidate is graded."""
    units: list[Choice] = []
    for source in sorted({c.module for v in fitting.values() for c, _ in v}):
        own = {t: [cb for cb in v if cb[0].module == source] for t, v in fitting.items()}
        own = {t: v for t, v in own.items() if v}
        units += [{t: v[j] if j < len(v) else v[0] for t, v in own.items()} for j in range(max(map(len, own.values())))]
    packed: list[Choice] = []
    for unit in sorted(units, key=len, reverse=True):
        into = next((choice for choice in packed if not choice.keys() & unit.keys()), None)
        if into is None:
            packed.append(dict(unit))
        else:
            into.update(unit)
    return packed


def grade_part(folder: Path, part: str, text: str, **options) -> dict[str, tuple[float, float, str]]:
    """{check: (score, points, output)} of `part` graded with `text` as the student's module (training left out:
    a trained part's training check trains the very functions its other checks grade first), each public check on
    its own cases only: a public check then earns whatever passes those, which the grader's round could only take
    back, so the test is stricter and needs no worker for that round."""
    from autograder.grader.engine import GradeOptions, grade

    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{part}.py").write_text(text, encoding="utf-8")
    report = grade(folder, GradeOptions(parts=(part,), training="without", **{"grader_cases": False, **options}))
    return {r.name: (r.score, r.max_score, r.output) for r in report.results}


class NoAnswer:
    """Each check's best score with no answer at all: the stub as handed out, or every TODO returning None (a check
    that any function that returns earns, such as one that the functions leave their inputs alone, is no answer's).
    The second is graded only once a submission earns more than the stub."""

    def __init__(self, tmp_path: Path, part: str, stub: str, part_targets: list[Target]):
        self.tmp_path, self.part, self.stub, self.targets = tmp_path, part, stub, part_targets
        self.scores = grade_part(tmp_path / "stub", part, stub)
        self.empty_graded = False

    def _grade_empty(self) -> None:
        lines = self.stub.split("\n")
        for target in self.targets:
            lines[target.todo_line] = lines[target.todo_line].split("raise")[0] + "return None"
        empty = grade_part(self.tmp_path / "empty", self.part, "\n".join(lines))
        self.scores = {name: max(self.scores[name], empty[name]) for name in self.scores}
        self.empty_graded = True

    def earned(self, graded: dict) -> dict[str, str]:
        """{check: "score/points"} of the checks of `graded` that earn more than with no answer."""
        if _over(graded, self.scores) and not self.empty_graded:
            self._grade_empty()
        return _over(graded, self.scores)


def _over(graded: dict, baseline: dict) -> dict[str, str]:
    return {
        name: f"{score:g}/{points:g}" for name, (score, points, _) in graded.items() if score > baseline[name][0] + 1e-9
    }


@pytest.fixture(scope="module")
def handout_files() -> dict[str, bytes]:
    from instructor import handout

    return handout.build()


def _reference_choice(part: str, part_targets: list[Target]) -> tuple[Choice, dict[str, Module]]:
    """Every TODO of `part` answered by its reference, pasted and called as a candidate is: the control that a
    pasted answer does earn the points (so that a candidate earning nothing is the candidate's doing)."""
    key = f"solutions/{part}.py"
    tree = ast.parse((ROOT / key).read_text(encoding="utf-8"))
    module = Module(key, None, tree, _definitions(tree))
    choice = {}
    for target in part_targets:
        kind = "method" if target.method else "function"
        candidate = Candidate(key, target.qualname, kind, tuple((p, p not in target.required) for p in target.params))
        choice[target] = (candidate, binding(target, candidate))
    return choice, {key: module}


@pytest.mark.slow
@pytest.mark.parametrize("part", MODULES)
def test_no_code_of_the_handout_earns_a_graded_functions_points(part, handout_files, tmp_path):
    modules = handout_modules(handout_files)
    stub = handout_files[f"{part}.py"].decode()
    part_targets = targets({part: stub})
    solved = {name.split(" (")[1].rstrip(")") for name in leak_scan.solution_regions() if f"/{part}.py:" in name}
    assert {t.qualname for t in part_targets} == solved, "the stub's TODOs are not the solution's regions"
    fitting = fits(part_targets, candidates(modules))
    no_answer = NoAnswer(tmp_path, part, stub, part_targets)

    # The control: the reference's own functions, pasted and called as the candidates are, pass the public checks.
    control, solution = _reference_choice(part, part_targets)
    graded = grade_part(
        tmp_path / "control", part, submission(stub, control, solution), public_only=True, grader_cases=False
    )
    lost = {name: output for name, (score, points, output) in graded.items() if score < points}
    assert not lost, f"the reference of {part}, pasted as the candidates are, fails: the paste is broken: {lost}"

    table, leaks, submissions = [], {}, rounds(fitting)
    for i, choice in enumerate(submissions):
        gain = no_answer.earned(grade_part(tmp_path / f"round{i}", part, submission(stub, choice, modules)))
        table += [
            f"{i:>5}  {t.qualname:<30} {c.name:<62} {', '.join(f'{p}={v}' for p, v in b if p != v) or '(by name)'}"
            for t, (c, b) in choice.items()
        ]
        table.append(f"{i:>5}  -> " + (f"EARNED {gain}" if gain else "nothing more than no answer"))
        if gain:
            leaks |= _who_earned(tmp_path / f"round{i}", part, stub, choice, modules, no_answer, gain)
    print(
        f"{part}: {sum(len(v) for v in fitting.values())} candidates for its {len(part_targets)} TODOs "
        f"({', '.join(f'{t.qualname}: {len(v)}' for t, v in fitting.items())}), graded in {len(submissions)} "
        f"submissions; points with no answer: {sum(s for s, _, _ in no_answer.scores.values()):g}\n"
        f"round  TODO{' ' * 27}candidate{' ' * 54}bound otherwise than by name\n" + "\n".join(table)
    )
    assert not leaks, f"code of the handout earns points of {part}:\n" + "\n".join(
        f"{k}: earns {v}" for k, v in leaks.items()
    )


def _who_earned(
    folder: Path,
    part: str,
    stub: str,
    choice: Choice,
    modules: dict[str, Module],
    no_answer: NoAnswer,
    gain: dict[str, str],
) -> dict[str, dict[str, str]]:
    """{"TODO <- candidate": the checks it earns alone} of a submission that earned `gain`; the candidates together
    when none earns alone."""
    alone = {}
    for j, (target, fit) in enumerate(choice.items()):
        got = no_answer.earned(grade_part(folder / f"alone{j}", part, submission(stub, {target: fit}, modules)))
        if got:
            alone[f"{target.qualname} <- {fit[0].name}"] = got
    return alone or {f"together ({'; '.join(f'{t.qualname} <- {c.name}' for t, (c, _) in choice.items())})": gain}


# -- the leak scan -----------------------------------------------------------------------------------------------------


def _handout(base: Path) -> dict[str, dict[str, bytes]]:
    """The handout as `python -m instructor handout --out DIR --zip FILE` writes it: {"folder"|"zip": its files}."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "instructor",
            "handout",
            "--out",
            str(base / "captioning"),
            "--zip",
            str(base / "captioning.zip"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return {
        "handout folder": leak_scan.read_files(base / "captioning"),
        "handout zip": leak_scan.read_files(base / "captioning.zip"),
    }


def _nbgrader_release(base: Path) -> dict[str, bytes]:
    """The files of the assignment nbgrader releases: `python -m instructor nbgrader-course --out DIR`, then
    `nbgrader generate_assignment` (source/ -> release/)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    from instructor import nbgrader_course

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")]))
        path = nbgrader_course.write_course(base / "course", "captioning")
        config = PyFileConfigLoader("nbgrader_config.py", path=str(path)).load_config()
        result = NbGraderAPI(config=config).generate_assignment("captioning")
    assert result["success"], result.get("log", "")
    return leak_scan.read_files(path / "release" / "captioning")


def _gradescope_visible(base: Path) -> dict[str, bytes]:
    """The files of the Gradescope zip that student code can read while it is graded: the worker's runtime
    (autograder.public.client.RUNTIME_FILES, copied world-readable for the sandboxed worker). setup.sh makes the rest
    of the zip root-only."""
    from autograder.grader.gradescope import build_zip
    from autograder.public.client import RUNTIME_FILES

    runtime = {p.relative_to(ROOT).as_posix() for pattern in RUNTIME_FILES for p in ROOT.glob(pattern)}
    with zipfile.ZipFile(build_zip(base / "autograder.zip")) as archive:
        visible = {name: archive.read(name) for name in archive.namelist() if name in runtime}
    assert "autograder/worker/main.py" in visible and "shared/parts.py" in visible, sorted(visible)
    return visible


@pytest.fixture(scope="module")
def student_files(tmp_path_factory) -> dict[str, dict[str, bytes]]:
    """{what: its files} of everything a student receives or can read."""
    base = tmp_path_factory.mktemp("answer-free")
    return _handout(base) | {
        "nbgrader release": _nbgrader_release(base),
        "Gradescope zip (what student code reads)": _gradescope_visible(base),
    }


@pytest.mark.xdist_group("answer-free-scan")  # one worker builds student_files once
def test_no_run_of_solution_lines_is_in_what_students_receive(student_files):
    regions = leak_scan.solution_regions()
    assert sum(len(lines) for lines in regions.values()) > 100, "the solution regions were not read"
    found = {what: leak_scan.leaks(files, regions) for what, files in student_files.items()}
    for what, files in student_files.items():
        print(f"{what}: {len(files)} files, {len(found[what])} run(s) of {leak_scan.RUN} solution lines")
    shown = [f"{what}: {leak}" for what, leaks in found.items() for leak in leaks]
    assert not shown, "solution lines in what students receive:\n" + "\n".join(shown)


@pytest.mark.xdist_group("answer-free-scan")  # one worker builds student_files once
def test_no_staff_only_file_is_in_the_handout_or_the_release(student_files):
    found = [
        f"{what}: {line}"
        for what, files in student_files.items()
        if not what.startswith("Gradescope")
        for line in leak_scan.staff_leaks(files)
    ]
    assert not found, "staff-only files handed to students:\n" + "\n".join(found)


# -- the tests catch what they are for (each planted in a copy) --------------------------------------------------------


def test_an_answer_planted_in_a_public_check_earns_points_and_is_caught(handout_files, tmp_path):
    """The reference's ngram_counts, pasted into a copy of the public BLEU checks as a helper of another name, fits
    ngram_counts and earns its points in the grader: what the substitution test reports as a leak."""
    reference = ast.parse((ROOT / "solutions" / "bleu.py").read_text(encoding="utf-8"))
    helper = next(f for f in reference.body if isinstance(f, ast.FunctionDef) and f.name == "ngram_counts")
    helper.name = "_count_grams"
    planted = dict(handout_files)
    checks = "autograder/public/checks/bleu/calls.py"
    planted[checks] = planted[checks] + f"\n\n{ast.unparse(helper)}\n".encode()
    modules = handout_modules(planted)
    stub = planted["bleu.py"].decode()
    target = next(t for t in targets({"bleu": stub}) if t.qualname == "ngram_counts")
    found = [(c, b) for c, b in fits([target], candidates(modules))[target] if c.qualname == "_count_grams"]
    assert found, "the planted helper does not fit ngram_counts"
    no_answer = NoAnswer(tmp_path, "bleu", stub, [target])
    gain = no_answer.earned(grade_part(tmp_path / "planted", "bleu", submission(stub, {target: found[0]}, modules)))
    assert "ngram_counts_is_the_counter_of_ngrams" in gain, gain


def test_the_scan_finds_solution_lines_renamed_and_a_staff_only_file(handout_files):
    """Three lines of Part 4's forward, their variables renamed and re-spaced, planted in a copy of another stub; a
    rubric and a file marked staff-only, planted in the copy; a run of trivial lines alone is no leak."""
    regions = leak_scan.solution_regions()
    region = next(name for name in regions if "AttnCaptioner.forward" in name)
    pasted = [
        "        out_scores, st = model.advance( captions[:,t], ctx, st )",
        "        outs.append(out_scores)",
        "        maps.append(alpha_t)",
    ]
    originals = [line.text.strip() for line in regions[region]]
    assert "step_logits, state = self.advance(captions[:, t], context, state)" in originals, originals
    planted = dict(handout_files)
    planted["reinforce.py"] += (
        "\n\ndef _planted(model, captions, ctx, st, outs, maps, alpha_t, t):\n" + "\n".join(pasted) + "\n"
    ).encode()
    planted["autograder/public/rubrics/part4.md"] = b"Question 4.1: full marks when the answer names ...\n"
    planted["notes.md"] = b"# Staff-only: grading notes for the written questions\n"
    found = leak_scan.leaks(planted, regions)
    assert any(leak.path == "reinforce.py" and leak.region == region for leak in found), [str(x) for x in found]
    staff = leak_scan.staff_leaks(planted)
    assert any("rubrics/part4.md" in line for line in staff) and any("notes.md" in line for line in staff), staff
    trivial = ["    return x", "    pass", "    )", "    else:", "    break"]
    assert all(leak_scan.is_trivial(line, leak_scan.normalise(line)) for line in trivial)
    assert not leak_scan.is_trivial(pasted[1], leak_scan.normalise(pasted[1]))
