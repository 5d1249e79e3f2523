# hostile: appended to solutions/decoding.py
# A28: one worker serves every check of a part, public and hidden, and a hidden check's inputs are the same on
# every run. Keep a fingerprint of every toy model the beam search sees, and show them all in a public check's
# feedback (here, how many there were): run after a hidden check, it shows that check's inputs.
import json as _json
import sys as _sys

# @@RUNTIME_NAMES@@

_seen = []
_reference_beam_search = beam_search
_reference_sample_captions = sample_captions


def _fingerprint(model) -> str:
    table = getattr(model, "table", None)
    return "none" if table is None else f"{tuple(table.shape)}:{float(table.double().sum()):.6f}"


def beam_search(model, state, k, max_len):
    _seen.append(f"{_fingerprint(model)}|k={k}")
    return _reference_beam_search(model, state, k, max_len)


def sample_captions(model, state, temperature, max_len, generator):
    if _caller_globals(1).get("__name__", "").startswith("autograder."):   # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps({"seen": len(set(_seen))}))
    return _reference_sample_captions(model, state, temperature, max_len, generator)
