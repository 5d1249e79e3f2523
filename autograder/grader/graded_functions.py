"""Which of a student's functions each check grades, read from the code: a check's recipes (the string constants
naming a recipe in the check's code, its helpers' and, for a training or reply check, its spec's recipe), and the
attributes of the student's module each recipe reads (`student.<name>`, in the recipe and the helpers of its module
it calls). A class (ShowTellRNN) stands for its methods.

The public rubric ships what a public check's failure weighs beyond its own points (`weighing`): how many hidden and
training checks grade one of the same functions, and their points; never which ones."""

from __future__ import annotations

import ast
import inspect
import types
from functools import cache
from pathlib import Path

from autograder.grader.rubric import load
from autograder.public.grade_report import Entry


def _reachable_strings(fn, seen: set) -> set[str]:
    """The string constants of `fn`'s code, of the functions defined in it and of the kit's functions it names or
    closes over (transitively), and the `recipe` of any object its closure holds (a TrainingSpec)."""
    if fn in seen:
        return set()
    seen.add(fn)
    found: set[str] = set()
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        for const in code.co_consts:
            if isinstance(const, str):
                found.add(const)
            elif isinstance(const, types.CodeType):
                codes.append(const)
        for name in code.co_names:
            target = fn.__globals__.get(name)
            if isinstance(target, types.ModuleType) and target.__name__.startswith("autograder."):
                # module.helper(...): the helper is another of the code's names
                targets = [getattr(target, other, None) for other in code.co_names]
            else:
                targets = [target]
            for target in targets:
                if isinstance(target, types.FunctionType) and target.__module__.startswith("autograder."):
                    found |= _reachable_strings(target, seen)
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, types.FunctionType) and value.__module__.startswith("autograder."):
            found |= _reachable_strings(value, seen)
        elif isinstance(getattr(value, "recipe", None), str):
            found.add(value.recipe)
    return found


def recipes_of(check) -> frozenset[str]:
    """The recipes ("<part>.<name>") a check calls."""
    import importlib

    from autograder.worker.recipes import RECIPES

    importlib.import_module(f"autograder.worker.recipes.{check.part}")

    strings = _reachable_strings(check.fn, set())
    return frozenset(key for s in strings for key in (s, f"{check.part}.{s}") if key in RECIPES)


@cache
def _module_reads(path: Path) -> dict[str, set[str]]:
    """{function name: the student attributes it reads, its own and those of the module's functions it calls}."""
    tree = ast.parse(path.read_text())
    reads, calls = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            reads[node.name] = {
                n.attr
                for n in ast.walk(node)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "student"
            }
            calls[node.name] = {
                n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
    closed = {}
    for name in reads:
        todo, done = [name], set()
        while todo:
            current = todo.pop()
            if current in done or current not in reads:
                continue
            done.add(current)
            todo.extend(calls[current])
        closed[name] = set().union(*(reads[d] for d in done))
    return closed


def functions_of_recipe(key: str) -> frozenset[str]:
    """The names of the student's module a recipe reads ("decoding.beam_toy" -> {"beam_search"})."""
    from autograder.worker.recipes import RECIPES

    fn = inspect.unwrap(RECIPES[key])
    return frozenset(_module_reads(Path(inspect.getsourcefile(fn))).get(fn.__name__, ()))


def functions_of(check) -> frozenset[str]:
    """The student's functions (and classes) a check calls."""
    return frozenset().union(*(functions_of_recipe(key) for key in recipes_of(check)))


@cache
def _reference_uses(part: str) -> dict[str, frozenset[str]]:
    """{top-level function or class of solutions/<part>.py: itself and every top-level name of the module it uses,
    directly or through another} (ShowTellRNN -> {ShowTellRNN, relu_rnn_step}): the stubs keep these names, so a
    student's ShowTellRNN that calls its relu_rnn_step is graded through it too."""
    tree = ast.parse((Path(__file__).resolve().parents[2] / "solutions" / f"{part}.py").read_text())
    defined = {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    direct = {
        name: {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in defined}
        for name, node in defined.items()
    }
    closed = {}
    for name in defined:
        todo, done = [name], set()
        while todo:
            current = todo.pop()
            if current not in done:
                done.add(current)
                todo.extend(direct[current])
        closed[name] = frozenset(done)
    return closed


def exercised_by(check) -> frozenset[str]:
    """The student's functions a check runs: those it calls and those they use in the reference's layout."""
    uses = _reference_uses(check.part)
    return frozenset().union(*(uses.get(name, {name}) for name in functions_of(check)))


def weighing(rubric: dict[str, dict[str, Entry]]) -> dict[str, dict[str, dict]]:
    """{part: {public check: {"functions": [...], "hidden_checks": n, "hidden_points": p, "training_checks": n,
    "training_points": p}}}: for each public check, the hidden and the training checks of the rubric that run one
    of the functions it calls (directly or through the functions they call), counted."""
    from autograder.grader.checks import checks_of

    out = {}
    for part, entries in rubric.items():
        checks = {c.name: c for c in checks_of(part) if c.name in entries}
        called = {name: functions_of(c) for name, c in checks.items()}
        run = {name: exercised_by(c) for name, c in checks.items()}
        out[part] = {}
        for name in checks:
            if entries[name].visibility != "public":
                continue
            others = [checks[o] for o in checks if entries[o].visibility != "public" and run[o] & called[name]]
            hidden = [o for o in others if not o.training]
            trained = [o for o in others if o.training]
            out[part][name] = {
                "functions": sorted(called[name]),
                "hidden_checks": len(hidden),
                "hidden_points": sum(entries[o.name].points for o in hidden),
                "training_checks": len(trained),
                "training_points": sum(entries[o.name].points for o in trained),
            }
    return out


def public_document(rubric: dict[str, dict[str, Entry]] | None = None) -> dict:
    """The public rubric (autograder/public/rubric.json, read by autograder.public.checker): the public checks of each
    part with their points and their numbers in the full rubric, and each part's points in the full grade (so that a
    student's `check` says what its total is out of); nothing else of the hidden checks."""
    rubric = load() if rubric is None else rubric
    weighs = weighing(rubric)  # per public check: the hidden and training checks of its functions, counted
    return {
        "about": "the public checks' points and numbers, and what else of the grade runs each one's functions "
        "(counts and points), generated from the full rubric by python -m instructor "
        "notebooks; do not edit by hand",
        "parts": {
            part: {
                "points": sum(e.points for e in entries.values()),
                "checks": {
                    name: {"points": e.points, "number": e.number, **weighs[part][name]}
                    for name, e in entries.items()
                    if e.visibility == "public"
                },
            }
            for part, entries in rubric.items()
        },
    }
