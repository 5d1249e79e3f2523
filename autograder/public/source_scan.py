"""A static scan of a submitted module, in the grading process: the names it uses that the ban of a reference op
is about (the op's functions and modules, and the worker's own machinery that enforces the ban), and the places
where it looks a name up at run time or reaches past the worker.

The ban itself runs inside the worker (autograder.worker.forbidden), beside the student's code, which can reach
and undo it (empty its tables, switch torch's function handling off, call the op from a thread of its own, where
torch's function modes do not reach). So no parity point depends on the ban alone: a module whose source names the
op or that machinery gets no credit from the checks that forbid the op, with a message saying why, and the staff
note of those checks names the line. Docstrings and comments are not scanned (the stubs' own docstrings name the
reference).

A name built at run time from pieces is not seen by the name scan, so the scan also refuses that credit to a module
that uses a facility that turns data into a reference or runs code outside the worker's control (`dynamic_uses`):
a lookup with a computed name (getattr, setattr, delattr), a namespace as a mapping (vars, globals, `__dict__`,
dir), code given as text (eval, exec, compile, TorchScript), frames and tracebacks, torch's private namespaces and
its function-mode and operator registries, modules that resolve dotted names or unpickle (importlib, pickle,
pydoc, logging.config, ...), and threads and processes of its own. None of them is needed to write the functions
of a part with a ban. This scan runs in the grading process on the module's text, so nothing the module does when
it runs can switch it off; what it cannot promise, and why, is in the kit's security notes (A22).
"""

from __future__ import annotations

import ast
import re

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

# -- facilities that turn data into a reference, or run code the worker's ban does not see ---------------------
# Built-in functions that look an attribute up by a name given as data: a use with a name that is not a string
# literal (the name scan reads literals) is a lookup by a name built at run time. hasattr only answers yes or no.
LOOKUPS = ("getattr", "setattr", "delattr")
# Built-in names that hand out a namespace as a mapping, or run text as code.
REFLECTIVE_BUILTINS = (
    "vars",
    "globals",
    "locals",
    "dir",
    "eval",
    "exec",
    "compile",
    "__import__",
    "__builtins__",
    "breakpoint",
    "__loader__",
    "__spec__",
)
# Special attributes a module needs none of: the ordinary protocol methods are not listed here and pass.
SAFE_DUNDERS = frozenset(
    {
        "__init__",
        "__name__",
        "__qualname__",
        "__class__",
        "__doc__",
        "__module__",
        "__version__",
        "__call__",
        "__len__",
        "__getitem__",
        "__setitem__",
        "__contains__",
        "__iter__",
        "__next__",
        "__enter__",
        "__exit__",
        "__repr__",
        "__str__",
        "__format__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
        "__add__",
        "__radd__",
        "__iadd__",
        "__sub__",
        "__rsub__",
        "__isub__",
        "__mul__",
        "__rmul__",
        "__imul__",
        "__truediv__",
        "__rtruediv__",
        "__itruediv__",
        "__floordiv__",
        "__mod__",
        "__pow__",
        "__rpow__",
        "__matmul__",
        "__rmatmul__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__and__",
        "__or__",
        "__xor__",
        "__invert__",
        "__float__",
        "__int__",
        "__index__",
        "__future__",
        "__file__",
        "__debug__",
        "__all__",
    }
)
# Frame, traceback and code-object attributes: the worker's own frames (and the ban's saved originals) lie there.
FRAME_ATTRIBUTES = (
    "tb_frame",
    "tb_next",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "f_code",
    "gi_frame",
    "gi_code",
    "cr_frame",
    "ag_frame",
    "co_consts",
    "co_names",
    "with_traceback",
)
# Modules (and their entry points) that resolve a dotted name, unpickle, load code, inspect the heap, or run code
# in a thread or process of its own (torch's function modes belong to the thread that set them; a new process has
# no ban at all), wherever they appear: imported, or reached as an attribute of another module.
ESCAPES = (
    "importlib",
    "builtins",
    "inspect",
    "gc",
    "ctypes",
    "_ctypes",
    "cffi",
    "pickle",
    "_pickle",
    "cPickle",
    "marshal",
    "dill",
    "cloudpickle",
    "copyreg",
    "shelve",
    "types",
    "code",
    "codeop",
    "runpy",
    "pkgutil",
    "imp",
    "zipimport",
    "pydoc",
    "logging",
    "unittest",
    "sympy",
    "mpmath",
    "jinja2",
    "yaml",
    "mmap",
    "operator",
    "attrgetter",
    "methodcaller",
    "Formatter",
    "get_type_hints",
    "ForwardRef",
    "subprocess",
    "multiprocessing",
    "concurrent",
    "threading",
    "_thread",
    "Thread",
    "asyncio",
    "pty",
    "pdb",
    "bdb",
    "trace",
    "tracemalloc",
    "allow_pickle",
    "weights_only",
    "environ",
    "putenv",
    # more modules that run text as code or resolve a dotted name given as text
    "doctest",
    "timeit",
    "cProfile",
    "profile",
    "rlcompleter",
    "xmlrpc",
    "pkg_resources",
    "importlib_metadata",
    "entry_points",
    "EntryPoint",
    # torch's code compilers and loaders, its function-mode and operator registries, and its other
    # namespaces that hold the op or the cells (quantization mappings) or run code elsewhere.
    "jit",
    "overrides",
    "library",
    "package",
    "hub",
    "cpp_extension",
    "ops",
    "ao",
    "serialization",
    "load",
    "loads",
)
# `sys` and `os` pass only for these attributes (printing, paths); any other use of them is an escape.
SAFE_MODULE_ATTRIBUTES = {
    "sys": frozenset(
        {
            "stdout",
            "stderr",
            "version",
            "version_info",
            "platform",
            "maxsize",
            "float_info",
            "exit",
            "getrecursionlimit",
            "setrecursionlimit",
            "getsizeof",
        }
    ),
    "os": frozenset({"path", "sep", "linesep", "cpu_count", "getcwd", "getpid"}),
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


def _module_aliases(tree: ast.Module) -> dict[str, str]:
    """{local name: module} for every `import sys` / `import os as o` of the modules with safe attributes."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in SAFE_MODULE_ATTRIBUTES:
                    aliases[alias.asname or alias.name] = alias.name
    return aliases


def _import_escape(node: ast.Import | ast.ImportFrom) -> str | None:
    """Why an import statement is an escape, or None."""
    if isinstance(node, ast.Import):
        parts = [(p, alias.name) for alias in node.names for p in alias.name.split(".")]
        top = [alias.name for alias in node.names if "." not in alias.name and alias.name in SAFE_MODULE_ATTRIBUTES]
        parts = [(p, name) for p, name in parts if name not in top]
    else:
        module = node.module or ""
        parts = [(p, module) for p in module.split(".") if p]
        if module in SAFE_MODULE_ATTRIBUTES:
            unsafe = [a.name for a in node.names if a.name not in SAFE_MODULE_ATTRIBUTES[module]]
            return f"imports {unsafe[0]} from {module}" if unsafe else None
        parts += [(alias.name, f"{module}.{alias.name}") for alias in node.names]
    for part, whole in parts:
        if (
            part in ESCAPES
            or part in SAFE_MODULE_ATTRIBUTES
            or _is_private(part)
            or (_is_dunder(part) and part != "__future__")
        ):
            return f"imports {whole}"
    return None


def _call_escape(node: ast.Call) -> str | None:
    """Why a call is a lookup by a name built at run time (getattr with a name that is not a string literal)."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in LOOKUPS:
        name = node.args[1] if len(node.args) > 1 else None
        literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
        if not literal or any(isinstance(a, ast.Starred) for a in node.args):
            return f"{func.id} with a name computed at run time"
    return None


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


def dynamic_uses(source: str) -> str | None:
    """ "line N: why" for the first place where `source` turns data into a reference or reaches past the worker
    (see the module's docstring), or None. A module that does not parse uses nothing."""
    tree = _parsed(source)
    if tree is None:
        return None
    own, aliases = _own_names(tree), _module_aliases(tree)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    safe_bases = {
        id(n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id in aliases
        and n.attr in SAFE_MODULE_ATTRIBUTES[aliases[n.value.id]]
    }
    found = []
    for node in ast.walk(tree):
        why = None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            why = _import_escape(node)
        elif isinstance(node, ast.Call):
            why = _call_escape(node)
        elif isinstance(node, ast.Name):
            if node.id in LOOKUPS and id(node) not in called:
                why = f"passes {node.id} on (a lookup whose name the grader cannot read)"
            elif node.id in REFLECTIVE_BUILTINS:
                why = f"uses {node.id}"
            elif node.id in aliases and id(node) not in safe_bases:
                why = f"uses {aliases[node.id]} beyond printing and paths"
        elif isinstance(node, ast.Attribute):
            base = node.value
            own_base = isinstance(base, ast.Name) and base.id in own
            if _is_dunder(node.attr) and node.attr not in SAFE_DUNDERS:
                why = f"reads {node.attr}"
            elif node.attr in FRAME_ATTRIBUTES:
                why = f"reads {node.attr} (frames and tracebacks)"
            elif (node.attr in ESCAPES or node.attr in SAFE_MODULE_ATTRIBUTES) and not own_base:
                why = f"uses {node.attr}"
            elif (
                _is_private(node.attr)
                and not own_base
                and not (isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super")
            ):
                why = f"reads {node.attr}, a private name of another module's object"
        elif isinstance(node, ast.keyword) and node.arg in ESCAPES:
            why = f"passes {node.arg}"
        if why is not None:
            found.append((getattr(node, "lineno", 0), why))
    if not found:
        return None
    line, why = min(found)
    return f"line {line}: {why}"


# A string that could name something: an identifier or a dotted path (what getattr, an import by name or a resolver
# takes). Free text, such as an error message that mentions ShowTellRNN or an LSTM, names nothing.
DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _names_in(text: str) -> set[str]:
    """The names `text` stands for: itself for an identifier, each part of a dotted path, none for free text."""
    return set(text.split(".")) if DOTTED_NAME.fullmatch(text) else set()


# What a module of any part never needs: the grader's own package (its worker runs the checks' recipes beside the
# module, and a recipe patched from the module would judge itself), the internals of functions (how one replaces a
# recipe's code), the worker's frames, and the registries of loaded modules (sys beyond printing and paths: _sys_beyond_printing). Only the module's text is read: a name built at run time
# passes here, as the ban's does (the kit's security notes, A22 and A55).
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
