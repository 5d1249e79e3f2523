"""What the grading process makes of what a worker sends, or of how it ended: an error's fields and the student's
frames, plain data, a training epoch's progress and captions, an exit status."""

from __future__ import annotations

import ast
import builtins
import functools
import re
import signal
import sys

from autograder.public.client.errors import EvaluationFailed
from autograder.public.client.interface import Evaluate
from autograder.worker.protocol import clean

# The exception kinds a message may name: Python's built-in exceptions and the ban's own error. Any other name
# (the worker reduces every exception to one of these, but the student's code can replace the worker's reducer)
# becomes "Exception": a class name is text the student's code chose, and may carry a hidden check's inputs.
KINDS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
) | {"ForbiddenOpError"}


def error_fields(error, module: str, source: str) -> tuple[str, str, str] | None:
    """(kind, message, where) of a well-formed error message from the worker about the module `module` (its text
    `source`), or None. The message is cleaned and capped here again (the worker's own cleaning runs beside the
    student's code); of the worker's traceback text only the line numbers of `module`'s own lines are kept, and
    `where` is the grader's text of those lines (student_frames)."""
    if not (
        isinstance(error, dict)
        and set(error) <= {"type", "message", "where"}
        and all(type(v) is str for v in error.values())
    ):
        return None
    kind = error.get("type", "Exception")
    return (
        kind if kind in KINDS else "Exception",
        clean(error.get("message", ""), 800),
        student_frames(error.get("where", ""), module, source),
    )


# A frame as the worker writes it (traceback.format_list: two spaces, then the file, line and function). Only the
# file and the line are read, and only a line of the student's own module counts: the file name, the function name
# and the line's text are the worker's to choose (code compiled under any name, a replaced reducer), and would carry
# whatever it holds, a hidden check's inputs included.
WORKER_FRAME = re.compile(r'^  File "([^"\n]*)", line (\d{1,9}), in ', re.MULTILINE)
FRAMES_KEPT = 3  # the innermost frames of the student's module a traceback shows


def student_frames(where: str, module: str, source: str) -> str:
    """The frames of the worker's traceback text `where` that name a line of the staged module `module` (whose text
    is `source`), innermost last, at most FRAMES_KEPT, written by the grader from its own copy of the module as
    traceback.format_list writes a frame (`File "bleu.py", line 42, in _bleu`, then the line's text); "" when none
    does. The function is the innermost definition around the line in the grader's parse of the module."""
    if not where:
        return ""
    lines, functions = _module_lines(source)
    kept = [
        int(line)
        for file, line in WORKER_FRAME.findall(where)
        if file == f"{module}.py" and 1 <= int(line) <= len(lines)
    ][-FRAMES_KEPT:]
    return "".join(
        f'  File "{module}.py", line {n}, in {functions.get(n, "<module>")}\n'
        + (f"    {clean(lines[n - 1].strip(), 200)}\n" if lines[n - 1].strip() else "")
        for n in kept
    )


@functools.lru_cache(maxsize=8)
def _module_lines(source: str) -> tuple[list[str], dict[int, str]]:
    """The module's lines as Python counts them (only a line feed, a carriage return or both end one) and, for each
    line inside a function or class, the innermost one's name (a lambda's is "<lambda>")."""
    lines = re.split(r"\r\n|\r|\n", source)
    if lines and lines[-1] == "":
        lines.pop()
    functions: dict[int, str] = {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python this interpreter reads: no names
        return lines, {n: "?" for n in range(1, len(lines) + 1)}
    for node in ast.walk(tree):  # outer definitions before inner ones, which then overwrite them
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            name = getattr(node, "name", "<lambda>")
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                functions[n] = name
    return lines, functions


MAX_DEPTH = 20


def is_plain(value, depth: int = 0) -> bool:
    """Whether a reply's value is plain data the checks may compute with: exact built-in types, and tensors
    whose elements all lie in their own storage (a zero-stride view of one element would make the grader
    allocate for every index it claims)."""
    if depth > MAX_DEPTH:
        return False
    if value is None or type(value) in (bool, int, float, str):
        return True
    if type(value) in (list, tuple):
        return all(is_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(
            type(k) in (str, int, tuple) and is_plain(k, depth + 1) and is_plain(v, depth + 1) for k, v in value.items()
        )
    torch = sys.modules.get("torch")  # a reply holds a tensor only if unpickling it imported torch
    if torch is not None and type(value) is torch.Tensor:
        return (
            value.layout == torch.strided
            and not value.requires_grad
            and value.numel() * value.element_size() <= value.untyped_storage().nbytes()
        )
    return False


MAX_EPOCHS = 10_000


def progress_of(message) -> tuple[int, int, float] | None:
    """(epoch, epochs, loss) of a worker's progress message {"progress": {"epoch": e, "epochs": n, "loss": x}}
    (and optionally "tokens", see judged_tokens) with 1 <= e <= n <= MAX_EPOCHS, exact ints and a float; None for
    anything else (student code can send it)."""
    if not isinstance(message, dict) or set(message) != {"progress"}:
        return None
    body = message["progress"]
    if not isinstance(body, dict) or set(body) - {"tokens"} != {"epoch", "epochs", "loss"}:
        return None
    epoch, epochs, loss = body["epoch"], body["epochs"], body["loss"]
    if type(epoch) is not int or type(epochs) is not int or type(loss) is not float:
        return None
    return (epoch, epochs, loss) if 1 <= epoch <= epochs <= MAX_EPOCHS else None


MALFORMED = object()  # judged_tokens of a message whose captions are not plain token tensors
MAX_CAPTIONS = 100_000  # rows of one judged token tensor
MAX_CAPTION_LENGTH = 256  # its columns
MAX_CAPTION_SETS = 8  # tensors of a {name: tensor} judged at once


def _token_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return (
        torch is not None
        and type(value) is torch.Tensor
        and value.dtype == torch.long
        and value.dim() == 2
        and value.shape[0] <= MAX_CAPTIONS
        and value.shape[1] <= MAX_CAPTION_LENGTH
    )


def judged_tokens(message):
    """The captions a progress message carries for judging (a (N, T) long tensor, or {name: such tensor}); None when
    it carries none; MALFORMED for anything else. Their meaning (N, the vocabulary) is checked by the judge."""
    body = message.get("progress") if isinstance(message, dict) else None
    if not isinstance(body, dict) or "tokens" not in body:
        return None
    tokens = body["tokens"]
    if _token_tensor(tokens):
        return tokens
    if (
        type(tokens) is dict
        and 0 < len(tokens) <= MAX_CAPTION_SETS
        and all(type(k) is str and _token_tensor(v) for k, v in tokens.items())
    ):
        return tokens
    return MALFORMED


def judge(evaluate: Evaluate | None, epoch: tuple[int, int, float], tokens) -> bool:
    """evaluate(epoch, epochs, tokens) is True; False without `evaluate`."""
    if evaluate is None:
        return False
    try:
        return evaluate(epoch[0], epoch[1], tokens) is True
    except Exception as exc:
        raise EvaluationFailed() from exc


def describe_exit(code: int | None, under_init: bool = False) -> str:
    """Why the worker ended, from the exit code of the process the grader started. `under_init`: that process is the
    worker's PID namespace (autograder/worker/init.py), which ends with the worker's exit status, or 128 + the
    signal that killed it, as a shell does (a worker that exits with such a status itself is reported the same)."""
    if code is None:
        return "the worker stopped answering"
    if under_init and 128 < code < 128 + signal.NSIG:
        code = 128 - code
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"the worker was killed by {name}" + (" (likely out of memory)" if name == "SIGKILL" else "")
    return f"the worker exited with status {code} (the student's code ended the process)"


def shown_exit(why: str) -> str:
    """describe_exit's text as a hidden check may show it: that the worker exited or was killed by a signal, not the
    status or the signal the student's code chose (SIGKILL stays named: the memory limit's, likely)."""
    if why.startswith("the worker exited with status "):
        return "the worker exited (the student's code ended the process)"
    if why.startswith("the worker was killed by ") and not why.startswith("the worker was killed by SIGKILL"):
        return "the worker was killed by a signal"
    return why
