"""The worker: the only process that imports student code.

Started by autograder.sandbox.client with one part's module staged alone in a folder. It imports
that module, then answers requests `{"recipe": name, "kwargs": {...}}` with `{"ok": result}` or
`{"error": {...}}` until the channel closes. Requests and replies are plain data
(autograder.sandbox.protocol); student output goes to the files the client gave as stdout/stderr.

    python -m autograder.sandbox.worker --module decoding --staging DIR --requests FD --replies FD
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import traceback


def _student_frames(exc: BaseException, staging: str) -> str:
    """The traceback lines that lie in the student's file: where their code failed, nothing of ours."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(staging)]
    for f in frames:
        f.filename = os.path.basename(f.filename)
    return "".join(traceback.format_list(frames[-3:]))


def _error(exc: BaseException, staging: str) -> dict:
    message = str(exc)
    return {"type": type(exc).__name__, "message": message[:800], "where": _student_frames(exc, staging)[:1500]}


def sanitize(obj, depth: int = 0):
    """Plain data only: tensors (detached, on the CPU), numbers, strings, None, lists, tuples, dicts.
    Anything else becomes {"__unsupported__": type name}, which the grader reports as a wrong type."""
    import torch

    if depth > 20:
        return {"__unsupported__": "a structure nested too deeply"}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().clone()
    if isinstance(obj, (list, tuple)):
        items = [sanitize(x, depth + 1) for x in obj]
        return items if isinstance(obj, list) else tuple(items)
    if isinstance(obj, dict) and all(isinstance(k, (str, int, tuple)) for k in obj):
        return {k: sanitize(v, depth + 1) for k, v in obj.items()}
    return {"__unsupported__": type(obj).__name__}


def import_student(module: str, staging: str):
    """Import staging/<module>.py under its own name (so `import <module>` inside it resolves to it)."""
    path = os.path.join(staging, f"{module}.py")
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod


def serve(module: str, staging: str, requests: int, replies: int) -> None:
    import torch

    from autograder import recipes
    from autograder.sandbox import protocol
    from autograder.sandbox.forbidden import forbid

    torch.set_num_threads(1)
    registry = recipes.load(module)
    try:
        student = import_student(module, os.path.realpath(staging))
    except BaseException as exc:  # a syntax error, an exception at import, even SystemExit
        protocol.send(replies, {"ready": False, "error": _error(exc, os.path.realpath(staging))})
        return
    protocol.send(replies, {"ready": True})
    staging = os.path.realpath(staging)
    while True:
        try:
            request = protocol.receive(requests)
        except protocol.ChannelClosed:
            return
        fn = registry.get(request.get("recipe"))
        if fn is None:
            protocol.send(replies, {"error": {"type": "UnknownRecipe", "message": str(request.get("recipe")),
                                              "where": ""}})
            continue
        try:
            torch.manual_seed(0)  # every call starts from the same global generator state
            with forbid(*fn.forbid):
                result = fn(student, **request.get("kwargs", {}))
            reply = {"ok": sanitize(result)}
        except BaseException as exc:  # student code may raise anything, SystemExit and KeyboardInterrupt included
            reply = {"error": _error(exc, staging)}
        protocol.send(replies, reply)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", required=True)
    parser.add_argument("--staging", required=True)
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    args = parser.parse_args()
    serve(args.module, args.staging, args.requests, args.replies)


if __name__ == "__main__":
    main()
