# hostile: appended to solutions/bleu.py
# F10: memory blow-ups. clipped_counts asks for 20 GB at once; ngram_counts returns a result far larger than a
# reply may be; and at import the module fills /dev/shm (memory, not disk) with files each under the
# per-file size limit. Internal calls (corpus_bleu -> clipped_counts -> ngram_counts) stay correct.
import os
import sys

# @@RUNTIME_NAMES@@

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
