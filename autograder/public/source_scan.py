"""A static scan of a submitted module, in the grading process: the names it uses that the ban of a reference op
is about (the op's functions and modules, and the worker's own machinery that enforces the ban), and the places
where it looks a name up at run time or reaches past the worker.

The ban itself runs inside the worker (autograder.worker.forbidden), beside the student's code, which can reach
and undo it (empty its tables, switch torch's function handling off, call the op from a thread of its own, where
torch's function modes do not reach). So no parity point depends on the ban alone: a module whose source names the
op or that machinery gets no credit from the checks that forbid the op, with a message saying why, and the staff
note of those checks names the line. Docstrings and comments are not scanned (the stubs' own docstrings name the
reference).

A module that looks names up at run time or reaches past the worker gets no such credit either: the facilities that
do so, and the scan for them, are source_escapes (`dynamic_uses`); what both scans read of the module's text is
source_syntax. Whether a module reaches into the grader's worker at all (no check of its part counts then) is
source_reach.
"""

from __future__ import annotations

from autograder.public.source_escapes import dynamic_uses
from autograder.public.source_syntax import _names_in, _parsed, _used
from autograder.worker.forbidden import FUNCTION_NAMES, OPS

# Names that reach or switch off the ban's machinery: the worker's modules, torch's switches for function and
# dispatch modes, and the private torch namespaces the ban lists one by one.
MACHINERY = (
    "forbidden",
    "ForbiddenOpError",
    "_refusing_mode",
    "RefuseByName",
    "FUNCTION_NAMES",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "_DisableTorchDispatch",
    "_pop_torch_function_stack",
    "_push_on_torch_function_stack",
    "_set_torch_function_mode",
    "_unset_dispatch_mode",
    "_pop_mode",
    "_len_torch_function_stack",
    "_VariableFunctions",
    "_VF",
    "sandbox",
    "__main__",
    "autograder",
    "recipes",
    "forbid",
)
# torch's modules built around the op, which run it inside their forward (the worker's ban refuses their
# attention too, but a module that holds one is as plain a use as the op's own name).
HOLDERS = {
    "sdpa": (
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
    ),
    "rnn_cell": (),
    "lstm_cell": (),
}


def op_names(op: str) -> set[str]:
    """The names that stand for `op` in source: its functions' names, the attributes the ban blocks, and torch's
    modules built around it."""
    return (
        set(FUNCTION_NAMES[op])
        | {attr for _, attr in OPS[op] if attr != "forward"}
        | {owner.rsplit(".", 1)[-1] for owner, attr in OPS[op] if attr == "forward"}
        | set(HOLDERS.get(op, ()))
    )


def banned_uses(source: str, ops: tuple[str, ...]) -> dict[str, str]:
    """{op: "line N names X"} for each op of `ops` whose names, or the ban's machinery, the module uses; for every
    op of `ops` when it looks names up at run time or reaches past the worker (dynamic_uses), "line N: <why>, which
    counts as a use: ...". A module that does not parse uses nothing (it fails at import)."""
    tree = _parsed(source)
    if tree is None:
        return {}
    used = _used(tree)
    found = {}
    for op in ops:
        names = op_names(op) | set(MACHINERY)
        for text, line in used:
            hit = next((n for n in sorted(names) if n in _names_in(text)), None)
            if hit is not None:
                found[op] = f"line {line} names {hit}"
                break
    dynamic = dynamic_uses(source) if ops else None
    if dynamic is not None:
        for op in ops:
            found.setdefault(op, f"{dynamic}, which counts as a use: the grader cannot read what it reaches")
    return found
