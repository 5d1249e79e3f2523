# hostile: appended to solutions/bleu.py
# F11: an output flood: 100 MB through print, then straight to file descriptor 1 and sys.__stdout__ (around the
# grader's capped stream) until the file size limit stops it, and 1 MB more printed on every call.
# The functions are the reference's: the part must still be graded in full.
import os
import sys


def _flood() -> None:
    print("x" * (100 * 2 ** 20))
    block = b"y" * 2 ** 20
    for _ in range(100):
        try:
            os.write(1, block)
        except OSError:          # EFBIG once RLIMIT_FSIZE is reached (Python ignores SIGXFSZ)
            break
    try:
        sys.__stdout__.write("z" * 2 ** 20)
        sys.__stdout__.flush()
    except OSError:
        pass


_flood()
_reference_ngram_counts = ngram_counts


def ngram_counts(tokens, n):
    print("w" * 2 ** 20)
    return _reference_ngram_counts(tokens, n)
