# hostile: appended to solutions/bleu.py
# A8: objects that say they equal anything: a float and an int subclass whose comparisons, subtraction and
# abs() always agree, and a non-number equal to everything.


def _agree(self, other):
    return True


class Agreeable(float):
    __eq__ = __le__ = __ge__ = __lt__ = __gt__ = _agree
    __ne__ = lambda self, other: False  # noqa: E731
    __hash__ = float.__hash__
    __sub__ = __rsub__ = lambda self, other: Agreeable(0.0)  # noqa: E731
    __abs__ = lambda self: Agreeable(0.0)  # noqa: E731


class AgreeableInt(int):
    __eq__ = __le__ = __ge__ = __lt__ = __gt__ = _agree
    __ne__ = lambda self, other: False  # noqa: E731
    __hash__ = int.__hash__


class Anything:
    __eq__ = _agree
    __ne__ = lambda self, other: False  # noqa: E731
    __hash__ = lambda self: 0  # noqa: E731


def ngram_counts(tokens, n):
    return {Anything(): Anything()}


def clipped_counts(hyp, refs, n):
    return AgreeableInt(0), AgreeableInt(0)


def corpus_bleu(hyps, refs, max_n=4):
    return [Agreeable(0.0) for _ in range(max_n)]
