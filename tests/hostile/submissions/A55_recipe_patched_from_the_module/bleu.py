# A55: no BLEU at all: the module patches the worker's recipe so that the "inputs unchanged" property holds by
# construction (its functions change their inputs).
import copy
from collections import Counter
from autograder.worker.recipes import bleu as _r

def _fake(student, hyps, refs, max_n, n):
    hw, rw = hyps[0].split(), [r.split() for r in refs[0]]
    return {"corpus_bleu": ((hyps, refs), copy.deepcopy((hyps, refs))),
            "clipped_counts": ((hw, rw), copy.deepcopy((hw, rw))),
            "ngram_counts": (hw, copy.deepcopy(hw))}
_r.inputs_unchanged.__code__ = _fake.__code__

def ngram_counts(tokens, n):
    tokens.append("x")
    return Counter()

def clipped_counts(hyp, refs, n):
    hyp.append("x")
    return (0, 0)

def corpus_bleu(hyps, refs, max_n=4):
    hyps.append("x")
    return [0.0] * max_n
