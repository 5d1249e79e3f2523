"""A static scan of a submitted module, in the grading process: the names it uses that the ban of a reference op
is about (the op's functions and modules, and the worker's own machinery that enforces the ban).

The ban itself runs inside the worker (autograder.worker.forbidden), beside the student's code, which can reach
and undo it (empty its tables, switch torch's function handling off). So no parity point depends on the ban
alone: a module whose source names the op or that machinery gets no credit from the checks that forbid the op,
with a message saying why, and the staff note of those checks names the line. Docstrings and comments are not
scanned (the stubs' own docstrings name the reference). A name built at run time from pieces is not seen here;
the ban in the worker still refuses the call unless it was also undone by computed names (docs/security.md,
A22 and A29).
"""
from __future__ import annotations

import ast

from autograder.worker.forbidden import FUNCTION_NAMES, OPS

# Names that reach or switch off the ban's machinery: the worker's modules, torch's switches for function and
# dispatch modes, and the private torch namespaces the ban lists one by one.
MACHINERY = ("forbidden", "ForbiddenOpError", "_refusing_mode", "RefuseByName", "FUNCTION_NAMES",
             "DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch", "_pop_torch_function_stack",
             "_push_on_torch_function_stack", "_set_torch_function_mode", "_unset_dispatch_mode",
             "_pop_mode", "_len_torch_function_stack", "_VariableFunctions", "_VF", "sandbox", "__main__")


def op_names(op: str) -> set[str]:
    """The names that stand for `op` in source: its functions' names and the attributes the ban blocks."""
    return set(FUNCTION_NAMES[op]) | {attr for _, attr in OPS[op] if attr != "forward"} | \
        {owner.rsplit(".", 1)[-1] for owner, attr in OPS[op] if attr == "forward"}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _used(source: str) -> list[tuple[str, int]]:
    """(text, line) of every name, attribute, import and (non-docstring) string constant in `source`."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    used = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            used.append((node.id, node.lineno))
        elif isinstance(node, ast.Attribute):
            used.append((node.attr, node.lineno))
        elif isinstance(node, ast.alias):
            used += [(part, node.lineno) for part in node.name.split(".")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            used += [(part, node.lineno) for part in node.module.split(".")]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            used.append((node.value, node.lineno))
    return used


def banned_uses(source: str, ops: tuple[str, ...]) -> dict[str, str]:
    """{op: "line N names X"} for each op of `ops` whose names, or the ban's machinery, the module uses.
    A module that does not parse uses nothing (it fails at import anyway)."""
    try:
        used = _used(source)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    found = {}
    for op in ops:
        names = op_names(op) | set(MACHINERY)
        for text, line in used:
            hit = next((n for n in sorted(names) if text == n or (len(text) > len(n) and n in text and
                                                                     not text.isidentifier())), None)
            if hit is not None:
                found[op] = f"line {line} names {hit}"
                break
    return found
