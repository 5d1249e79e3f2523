# hostile: appended to solutions/bleu.py
# A7: look for what the grader knows from inside the worker: every object the garbage collector tracks (the
# hidden seed as a number, reference source text), the frames that called us, and the imported modules.
import gc
import json
import sys


def _scan() -> dict:
    seed = int("@@SEED_REVERSED@@"[::-1])           # the hidden seed, to recognise it (never stored as a number)
    marker = "".join(["### BEGIN ", "SOLUTION"])     # only reference source holds this line (kept out of our constants)
    seed_hits = text_hits = 0
    for obj in gc.get_objects():
        try:
            values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()
            for value in values:
                if type(value) is int and value == seed:
                    seed_hits += 1
                elif type(value) is str and marker in value and value != marker:
                    text_hits += 1
        except Exception:  # noqa: BLE001
            continue
    names, frame = set(), sys._getframe()
    while frame is not None:
        names.update(k for k in frame.f_locals if k in ("expected", "reference", "ref", "answer", "oracle", "ctx"))
        frame = frame.f_back
    modules = sorted(m for m in sys.modules if m == "solutions" or m.startswith(("solutions.", "hypothesis",
                     "autograder.public.checks", "autograder.grader.context", "autograder.grader.engine", "autograder.public.compare")))
    return {"seed": seed_hits, "solution_text": text_hits, "frame_names": sorted(names), "modules": modules}


_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    if sys._getframe(1).f_globals.get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + json.dumps(_scan(), separators=(",", ":")))
    return _reference_ngram_counts(tokens, n)
