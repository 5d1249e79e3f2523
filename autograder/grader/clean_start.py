"""A grading command's clean start: its template (autograder/public/client/template.py) forked from the grading
process right after that process's `import torch`, so that the two share one copy of torch's memory (about 150 MB of
a grade's peak) and a grade imports torch once instead of twice.

Every zygote is forked from the template, and the student code of every worker can read its own memory: the template
must hold nothing of the grader's, no argument, no environment variable, nothing hidden. So the command starts twice:

1. As typed (`python -m autograder grade SUBMISSION ...`): it writes its arguments and environment to an anonymous
   file (memfd) and executes itself again, without its arguments (`python -m autograder`), with an environment of
   the kit's (ENVIRONMENT: the workers' PATH, a UTF-8 locale and hash seed 0; the kit on PYTHONPATH, the anonymous
   file's number as STATE and the workers' own settings, CAPTIONKIT_WORKER_*).
2. Executed again: it imports torch and forks the template, which closes the anonymous file unread and blanks the
   environment block it inherited (what /proc/self/environ shows); then it reads the file back, takes its arguments
   and environment again (its temporary folder and locale among them) and goes on as the command that was typed.

The commands of `python -m autograder` that grade in their own process start this way (COMMANDS), and so may any
program that grades (benchmarks/grade_benchmark.py); nothing does where Linux's memfd or fork is missing. Where the
fork fails, the grade starts its template as a fresh interpreter when it needs one (client.template.current_template).
"""

from __future__ import annotations

import gc
import json
import os
import sys

COMMANDS = ("grade", "demo", "gradescope-run")
STATE = "CAPTIONKIT_CLEAN_START"  # the anonymous file's descriptor, in the environment of the command's second start
# The environment of the second start, which the template inherits: the kit's values only, none of the command's (a
# worker reads its process's first environment in /proc/self/environ, and the heap keeps what was freed), so the
# temporary folder and the locale the command was given return with the command, after the fork.
ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
WORKER_SETTINGS = ("CAPTIONKIT_WORKER_CUDA", "CAPTIONKIT_WORKER_DROP")  # the workers' own (zygote.worker_environment)


def start(grading: bool) -> None:
    """Called first by a program that grades (`python -m autograder`: `grading` when its command is one of COMMANDS):
    executes the program again (step 1) or, executed again, forks its template and takes its arguments and
    environment back (step 2). Returns in the process that goes on with the program."""
    if STATE in os.environ:
        _fork_template_and_resume(int(os.environ[STATE]))
    elif grading and hasattr(os, "memfd_create") and hasattr(os, "fork"):
        _execute_again()


def _program() -> list[str]:
    """How this interpreter was asked to run its program, without the program's arguments: ["-m", MODULE],
    ["-c", TEXT] or [SCRIPT]."""
    words = sys.orig_argv[: len(sys.orig_argv) - (len(sys.argv) - 1)]
    return words[-2:] if len(words) >= 3 and words[-2] in ("-m", "-c") else words[-1:]


def _execute_again() -> None:
    from autograder.public.client.runtime import WORKER_PYTHON_FLAGS

    state = os.memfd_create("captionkit-command", 0)  # inheritable across exec, unlike Python's default
    os.write(state, json.dumps({"argv": sys.argv, "environ": dict(os.environ)}).encode())
    kit = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environment = {
        **ENVIRONMENT,
        **{name: os.environ[name] for name in WORKER_SETTINGS if name in os.environ},
        "PYTHONPATH": kit,
        STATE: str(state),
    }
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *WORKER_PYTHON_FLAGS, *_program()], environment)


def _fork_template_and_resume(state: int) -> None:
    try:
        import torch  # noqa: F401 (the one import the template and the grading process share)

        # torch's objects live as long as the process: out of the collector's reach, a collection neither walks them
        # (the grader's after each training check took 60 ms) nor writes to the pages the template shares.
        gc.collect()
        gc.freeze()
        from autograder.public.client import template
        from autograder.public.client.zygote import worker_environment

        template.prefork(worker_environment)
    except Exception as exc:  # noqa: BLE001 (the grade goes on; its template starts as a fresh interpreter)
        print(f"grader: no template forked at the start ({type(exc).__name__}: {exc})", file=sys.stderr)
    os.lseek(state, 0, os.SEEK_SET)
    with os.fdopen(state, "rb") as f:
        command = json.loads(f.read())
    os.environ.clear()
    os.environ.update(command["environ"])
    sys.argv = command["argv"]
    import tempfile

    tempfile.tempdir = None  # read from the command's TMPDIR again
