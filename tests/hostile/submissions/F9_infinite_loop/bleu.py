# hostile: appended to solutions/bleu.py
# F9: an infinite loop in C (no bytecode boundary for a Python signal handler to run at), with SIGTERM,
# SIGINT and SIGALRM ignored: only an uncatchable SIGKILL from outside ends it.
import itertools
import signal

_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if hyps == ["the cat is on the mat"]:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)
        sum(itertools.count())
    return _reference_corpus_bleu(hyps, refs, max_n)
