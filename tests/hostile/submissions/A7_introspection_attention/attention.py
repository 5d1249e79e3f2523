# hostile: appended to solutions/attention.py
# A7 in Part 4, whose worker holds the references of Parts 1 and 2 (its training uses them): can student
# code read their source? It looks in the frames that called it and in every dict the garbage collector
# tracks (one level down too: a dict of strings alone is not tracked).
import gc
import json
import sys


def _scan() -> dict:
    marker = "".join(["### BEGIN ", "SOLUTION"])     # kept out of this module's own constants
    texts = {}

    def look(mapping, where, depth=0):
        for key, value in list(mapping.items()):
            if type(value) is str and marker in value and value != marker:
                texts[f"{where}[{str(key)[:30]}]"] = len(value)
            elif isinstance(value, dict) and depth < 2:
                look(value, f"{where}[{str(key)[:30]}]", depth + 1)

    frame = sys._getframe()
    while frame is not None:
        look(frame.f_locals, f"frame {frame.f_code.co_name}")
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            try:
                look(obj, "a dict")
            except Exception:  # noqa: BLE001
                continue
    modules = sorted(m for m in sys.modules if m.startswith("solutions."))
    return {"solution_text": dict(sorted(texts.items())[:6]), "modules": modules}


def attend(query, keys, values):
    raise RuntimeError("PROBE" + json.dumps(_scan(), separators=(",", ":")))
