"""What the source scan (source_scan, source_escapes, source_reach) reads of a submitted module's text: its syntax
tree, or None when the grader cannot parse it (UNPARSEABLE); every name, attribute, import and string it uses but
its docstrings (`_used`); the names a string stands for (`_names_in`); and which names are private, special, or the
module's own.
"""

from __future__ import annotations

import ast
import re


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def _used(tree: ast.AST) -> list[tuple[str, int]]:
    """(text, line) of every name, attribute, import, class-pattern attribute and (non-docstring) string constant
    in `tree`."""
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
        elif isinstance(node, ast.MatchClass):  # `case object(name=x)` reads attribute `name` of the subject
            used += [(name, node.lineno) for name in node.kwd_attrs]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            used.append((node.value, node.lineno))
    return used


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not _is_dunder(name)


def _own_names(tree: ast.Module) -> set[str]:
    """The names the module's own code defines (functions, classes, and `self` and `cls`), whose private attributes
    are the module's own business."""
    own = {"self", "cls"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
    return own


# What ast.parse raises for a source it cannot read: not Python, or nested past the parser's limits (20,000 unary
# minus signs in a row: MemoryError on Python 3.11).
UNPARSEABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


def _parsed(source: str) -> ast.Module | None:
    """The module's syntax tree, or None when the grader cannot read it (the worker's import, which parses it the
    same way, fails too: the part earns nothing either way)."""
    try:
        return ast.parse(source)
    except UNPARSEABLE:
        return None


# A string that could name something: an identifier or a dotted path (what getattr, an import by name or a resolver
# takes). Free text, such as an error message that mentions ShowTellRNN or an LSTM, names nothing.
DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _names_in(text: str) -> set[str]:
    """The names `text` stands for: itself for an identifier, each part of a dotted path, none for free text."""
    return set(text.split(".")) if DOTTED_NAME.fullmatch(text) else set()
