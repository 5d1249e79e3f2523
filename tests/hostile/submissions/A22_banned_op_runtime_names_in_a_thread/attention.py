# hostile: appended to solutions/attention.py
# A22 evasion with names built at run time and no machinery at all: the op is taken from torch.nn.functional's
# namespace by a key built from pieces, and called from a thread of the module's own, where torch's function modes
# (which belong to the thread that set them) do not reach.
import threading

_OP = [vars(F)["".join(("scaled", "_dot", "_product", "_attention"))]]


def _in_a_thread(*args):
    out = []
    worker = threading.Thread(target=lambda: out.append(_OP[0](*args)))
    worker.start()
    worker.join()
    return out[0]


def attend(query, keys, values):
    context = _in_a_thread(query.unsqueeze(1), keys, values).squeeze(1)
    eye = torch.eye(keys.shape[1], dtype=keys.dtype).expand(keys.shape[0], -1, -1)
    weights = _in_a_thread(query.unsqueeze(1), keys, eye).squeeze(1)
    return context, weights
