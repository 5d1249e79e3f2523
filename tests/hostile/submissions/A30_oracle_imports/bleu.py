# hostile: appended to solutions/bleu.py
# A30: the BLEU checks compare against nltk and pycocoevalcap; if the worker can import them, BLEU can be
# delegated to the oracle itself. Report which of them import.
import json as _json
import sys as _sys

_reference_ngram_counts = ngram_counts


def _imports(name: str) -> str:
    try:
        __import__(name)
        getattr(_sys.modules[name], "corpus_bleu" if name.startswith("nltk") else "Bleu")
        return "imported"
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__


def ngram_counts(tokens, n):
    if _sys._getframe(1).f_globals.get("__name__", "").startswith("autograder."):  # the grader's own call
        raise RuntimeError("PROBE" + _json.dumps({m: _imports(m) for m in ("nltk.translate.bleu_score", "pycocoevalcap.bleu.bleu")}))
    return _reference_ngram_counts(tokens, n)
