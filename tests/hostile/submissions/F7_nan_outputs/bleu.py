# hostile: appended to solutions/bleu.py
# F7: non-finite scores (a 0/0 and a log(0) left unguarded). `nan` passes `not (err > tol)`; `-inf` passes `x < thr`.
def corpus_bleu(hyps, refs, max_n=4):
    return [float("nan"), float("-inf"), float("inf"), float("nan")][:max_n] + [float("nan")] * max(0, max_n - 4)
