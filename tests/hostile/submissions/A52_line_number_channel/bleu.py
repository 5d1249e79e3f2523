# hostile: appended to solutions/bleu.py
# A52: a line number is a channel. The grader names only a line of the staged bleu.py (A39), but the module chooses
# which line raises: code that raises from line BASE + f(input) sends f(input) out with the location. The grader runs
# each public check that passed again on cases drawn from its hidden seed and shows that round's failure at once;
# a hidden check's failure is shown after the due date. Here the line carries the length of the tokens and n of a
# call of ngram_counts that no public check makes.
import sys as _sys

# @@RUNTIME_NAMES@@

# What ngram_counts' public check sends (recorded by running the handout's checks): any other input is the
# grader's (its round of a public check, or a hidden check).
PUBLIC_NGRAM_CASES = @@PUBLIC_NGRAM_CASES@@
_reference_ngram_counts = ngram_counts
LINES = 64   # the line raised from is the one of _RAISE_AT[code]: code = 4 * (len(tokens) % 16) + (n - 1) % 4
_RAISE_AT = [
    lambda: int('x'),   # 0
    lambda: int('x'),   # 1
    lambda: int('x'),   # 2
    lambda: int('x'),   # 3
    lambda: int('x'),   # 4
    lambda: int('x'),   # 5
    lambda: int('x'),   # 6
    lambda: int('x'),   # 7
    lambda: int('x'),   # 8
    lambda: int('x'),   # 9
    lambda: int('x'),   # 10
    lambda: int('x'),   # 11
    lambda: int('x'),   # 12
    lambda: int('x'),   # 13
    lambda: int('x'),   # 14
    lambda: int('x'),   # 15
    lambda: int('x'),   # 16
    lambda: int('x'),   # 17
    lambda: int('x'),   # 18
    lambda: int('x'),   # 19
    lambda: int('x'),   # 20
    lambda: int('x'),   # 21
    lambda: int('x'),   # 22
    lambda: int('x'),   # 23
    lambda: int('x'),   # 24
    lambda: int('x'),   # 25
    lambda: int('x'),   # 26
    lambda: int('x'),   # 27
    lambda: int('x'),   # 28
    lambda: int('x'),   # 29
    lambda: int('x'),   # 30
    lambda: int('x'),   # 31
    lambda: int('x'),   # 32
    lambda: int('x'),   # 33
    lambda: int('x'),   # 34
    lambda: int('x'),   # 35
    lambda: int('x'),   # 36
    lambda: int('x'),   # 37
    lambda: int('x'),   # 38
    lambda: int('x'),   # 39
    lambda: int('x'),   # 40
    lambda: int('x'),   # 41
    lambda: int('x'),   # 42
    lambda: int('x'),   # 43
    lambda: int('x'),   # 44
    lambda: int('x'),   # 45
    lambda: int('x'),   # 46
    lambda: int('x'),   # 47
    lambda: int('x'),   # 48
    lambda: int('x'),   # 49
    lambda: int('x'),   # 50
    lambda: int('x'),   # 51
    lambda: int('x'),   # 52
    lambda: int('x'),   # 53
    lambda: int('x'),   # 54
    lambda: int('x'),   # 55
    lambda: int('x'),   # 56
    lambda: int('x'),   # 57
    lambda: int('x'),   # 58
    lambda: int('x'),   # 59
    lambda: int('x'),   # 60
    lambda: int('x'),   # 61
    lambda: int('x'),   # 62
    lambda: int('x'),   # 63
]


def encoded(tokens, n) -> int:
    return 4 * (len(tokens) % 16) + (n - 1) % 4


def ngram_counts(tokens, n):
    called_by_the_grader = _caller_globals(1) is not globals()   # not by this module's own functions
    if called_by_the_grader and [list(tokens), n] not in PUBLIC_NGRAM_CASES:
        _RAISE_AT[encoded(tokens, n)]()   # ValueError, raised on the line that says what the input was
    return _reference_ngram_counts(tokens, n)
