"""Whether a submitted module reaches into the grader's worker (`grader_reach`): the worker runs the checks' recipes
beside the module, so a module whose source names the grader's package, the internals of functions, the worker's
frames or the registry of loaded modules earns no check of its part (the kit's security notes, A55 and A64).
"""

from __future__ import annotations

import ast

from autograder.public.source_escapes import FRAME_ATTRIBUTES, SAFE_MODULE_ATTRIBUTES, _module_aliases
from autograder.public.source_syntax import _names_in, _parsed, _used

# What a module of any part never needs: the grader's own package (its worker runs the checks' recipes beside the
# module, and a recipe patched from the module would judge itself), the internals of functions (how one replaces a
# recipe's code), the worker's frames, and the registries of loaded modules (sys beyond printing and paths:
# _sys_beyond_printing). Only the module's text is read: a name built at run time passes here, as the ban's does (the
# kit's security notes, A22 and A55).
WORKER_REACH = (
    "autograder",
    "__code__",
    "__globals__",
    "__closure__",
    "__defaults__",
    "__kwdefaults__",
    "__wrapped__",
    "__builtins__",
    "__import__",
    "importlib",
    "gc",
    # the worker's frames: a caller's frame holds the recipe's globals (its module, the registry)
    *FRAME_ATTRIBUTES,
    "inspect",
    "currentframe",
    "walk_stack",
    "walk_tb",
    "settrace",
    "setprofile",
)


def grader_reach(source: str) -> str | None:
    """ "line N names X" for the first place where `source` reaches into the grader's worker (WORKER_REACH), or
    None. A module that does not parse reaches nothing (it fails at import)."""
    tree = _parsed(source)
    if tree is None:
        return None
    hits = [(line, name) for text, line in _used(tree) for name in WORKER_REACH if name in _names_in(text)]
    hits += _sys_beyond_printing(tree)
    return f"line {min(hits)[0]} names {min(hits)[1]}" if hits else None


def _sys_beyond_printing(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) for every use of `sys` other than its attributes for printing and limits
    (SAFE_MODULE_ATTRIBUTES): sys.modules by any spelling (`from sys import modules`, `import sys as s`, torch.sys,
    sys passed to getattr or vars) is the registry of the worker's loaded modules, its recipes among them."""
    aliases = {name for name, module in _module_aliases(tree).items() if module == "sys"}
    safe = SAFE_MODULE_ATTRIBUTES["sys"] | {"__stdout__", "__stderr__", "executable"}
    hits, bases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            bases.add(id(node.value))
            if node.attr not in safe:
                hits.append((node.lineno, f"sys.{node.attr}"))
        elif isinstance(node, ast.Attribute) and node.attr == "sys":
            hits.append((node.lineno, "sys"))
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            hits += [(node.lineno, f"sys.{alias.name}") for alias in node.names if alias.name not in safe]
    hits += [
        (node.lineno, "sys")
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and node.id in aliases and id(node) not in bases
    ]
    return hits
