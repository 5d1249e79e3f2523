"""The facilities that turn data into a reference or run code outside the worker's control, and the scan that finds
them in a submitted module's text (`dynamic_uses`), in the grading process.

A name built at run time from pieces is not seen by the name scan (source_scan), so the scan also refuses the credit
of the checks that ban an op to a module that uses one of these facilities: a lookup with a computed name (getattr,
setattr, delattr), a namespace as a mapping (vars, globals, `__dict__`, dir), code given as text (eval, exec, compile,
TorchScript), frames and tracebacks, torch's private namespaces and its function-mode and operator registries, modules
that resolve dotted names or unpickle (importlib, pickle, pydoc, logging.config, ...), and threads and processes of
its own. None of them is needed to write the functions of a part with a ban. This scan runs in the grading process on
the module's text, so nothing the module does when it runs can switch it off; what it cannot promise, and why, is in
the kit's security notes (A22).
"""

from __future__ import annotations

import ast

from autograder.public.source_syntax import _is_dunder, _is_private, _own_names, _parsed

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
