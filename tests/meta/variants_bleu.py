"""Part 3 variants."""

from tests.meta.variants import Variant

# The one check that tests the zero conventions (c = 0, some p_n = 0): the convention variants may fail it only.
ZERO_CHECK = "bleu_is_zero_when_a_precision_is_zero_or_c_is_zero"
# The one check that tests the closest-length tie convention (a tie goes to the shorter reference).
TIE_CHECK = "closest_length_ties_go_to_the_shorter_reference"

VARIANTS = [
    Variant(
        "bleu",
        "ngram_counts_misses_the_last_ngram",
        "for i in range(len(tokens) - n + 1))",
        "for i in range(len(tokens) - n))",
        correct=False,
        why="an off-by-one window drops the caption's last n-gram",
    ),
    Variant(
        "bleu",
        "no_clipping",
        "    matches = sum(min(count, max_in_a_ref[gram]) for gram, count in candidate.items())",
        "    matches = sum(count for gram, count in candidate.items() if gram in max_in_a_ref)",
        correct=False,
        why="credits every candidate n-gram found in some reference, however often it repeats",
    ),
    Variant(
        "bleu",
        "clips_at_the_sum_over_references",
        "            max_in_a_ref[gram] = max(max_in_a_ref[gram], count)",
        "            max_in_a_ref[gram] += count",
        correct=False,
        why="clips at the total count over all references instead of the most in one",
    ),
    Variant(
        "bleu",
        "averages_per_sentence_precisions",
        "            matches[n - 1] += m\n            totals[n - 1] += t\n",
        "            matches[n - 1] += m / t if t else 0\n            totals[n - 1] += 1 if t else 0\n",
        correct=False,
        why="p_n is the mean of per-sentence precisions, not corpus sums",
    ),
    Variant(
        "bleu",
        "closest_length_tie_goes_to_the_first_reference",
        "        r += min((abs(len(ref) - len(hyp_words)), len(ref)) for ref in ref_words)[1]",
        "        r += len(min(ref_words, key=lambda ref: abs(len(ref) - len(hyp_words))))",
        correct=False,
        why="a tie in the closest length goes to whichever reference is listed first",
        convention=TIE_CHECK,
    ),
    Variant(
        "bleu",
        "r_is_the_shortest_reference",
        "        r += min((abs(len(ref) - len(hyp_words)), len(ref)) for ref in ref_words)[1]",
        "        r += min(len(ref) for ref in ref_words)",
        correct=False,
        why="the effective reference length is the shortest reference, not the closest",
    ),
    Variant(
        "bleu",
        "brevity_penalty_inverted",
        "    bp = 1.0 if c > r else math.exp(1 - r / c)",
        "    bp = 1.0 if c > r else math.exp(1 - c / r)",
        correct=False,
        why="exp(1 - c/r) instead of exp(1 - r/c)",
    ),
    Variant(
        "bleu",
        "no_guard_for_an_empty_corpus",
        "    if c == 0:\n        return [0.0] * max_n\n",
        "",
        correct=False,
        why="divides by c = 0 when every candidate is empty",
        convention=ZERO_CHECK,
    ),
    Variant(
        "bleu",
        "a_zero_precision_zeroes_every_order",
        "            return scores + [0.0] * (max_n - n + 1)",
        "            return [0.0] * max_n",
        correct=False,
        why="p_4 = 0 also zeroes BLEU-1..3",
        convention=ZERO_CHECK,
    ),
    Variant(
        "bleu",
        "smooths_zero_precisions_like_pycocoevalcap",
        "        if matches[n - 1] == 0:  # p_n = 0 (or no candidate n-grams): this and every higher order is 0\n"
        "            return scores + [0.0] * (max_n - n + 1)\n"
        "        log_p_sum += math.log(matches[n - 1] / totals[n - 1])",
        "        log_p_sum += math.log((matches[n - 1] + 1e-15) / (totals[n - 1] + 1e-9))",
        correct=False,
        why="epsilon smoothing gives a small positive BLEU-N where the spec says 0",
        convention=ZERO_CHECK,
    ),
    Variant(
        "bleu",
        "bleu_n_is_bp_times_p_n",
        "        scores.append(bp * math.exp(log_p_sum / n))",
        "        scores.append(bp * matches[n - 1] / totals[n - 1])",
        correct=False,
        why="BLEU-N uses p_N alone instead of the geometric mean of p_1..p_N",
    ),
    Variant(
        "bleu",
        "splits_on_single_spaces",
        "        hyp_words = hyp.split()",
        "        hyp_words = hyp.split(' ')",
        correct=False,
        why="split(' ') makes empty words of repeated spaces and a word of the empty caption",
    ),
    Variant(
        "bleu",
        "tokenises_the_references_in_place",
        "        ref_words = [ref.split() for ref in ref_captions]",
        "        ref_captions[:] = [ref.split() for ref in ref_captions]\n        ref_words = ref_captions",
        correct=False,
        why="overwrites the caller's reference strings with word lists",
    ),
    # Functions that compute nothing: every property a constant satisfies (invariance under reordering or respacing,
    # a corpus against itself, ties where BP = 1) is anchored to a score that depends on the captions.
    Variant(
        "bleu",
        "corpus_bleu_is_a_constant_zero",
        "    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        "    return [0.0] * max_n\n    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        correct=False,
        why="returns [0.0] * max_n whatever the captions",
    ),
    Variant(
        "bleu",
        "corpus_bleu_is_a_constant_one",
        "    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        "    return [1.0] * max_n\n    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        correct=False,
        why="returns [1.0] * max_n whatever the captions",
    ),
    Variant(
        "bleu",
        "corpus_bleu_is_a_hash_of_the_words",
        "    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        "    if all(hyp in ref_captions for hyp, ref_captions in zip(hyps, refs)):\n"
        "        return [1.0] * max_n\n"
        '    words = sorted(" ".join(list(hyps) + [r for rs in refs for r in rs]).split())\n'
        '    return [sum(map(ord, "".join(words))) % 997 / 997] * max_n\n'
        "    ### BEGIN SOLUTION\n    matches, totals = [0] * max_n, [0] * max_n\n",
        correct=False,
        why="1 for candidates among their references, else a number made of the words, not BLEU",
    ),
    # Correct implementations written differently from the reference.
    Variant(
        "bleu",
        "ngram_counts_by_zip",
        "    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))",
        "    return Counter(zip(*(tokens[i:] for i in range(n))))",
        correct=True,
        why="n shifted copies zipped together",
    ),
    Variant(
        "bleu",
        "clipping_by_counter_union_and_intersection",
        "    max_in_a_ref = Counter()\n"
        "    for ref in refs:\n"
        "        for gram, count in ngram_counts(ref, n).items():\n"
        "            max_in_a_ref[gram] = max(max_in_a_ref[gram], count)\n"
        "    matches = sum(min(count, max_in_a_ref[gram]) for gram, count in candidate.items())\n"
        "    return matches, sum(candidate.values())",
        "    most = Counter()\n"
        "    for ref in refs:\n"
        "        most |= ngram_counts(ref, n)  # union: the larger count of each n-gram\n"
        "    return sum((candidate & most).values()), max(len(hyp) - n + 1, 0)  # intersection: the smaller",
        correct=True,
        why="Counter | is the maximum over references, & the clipped minimum",
    ),
    Variant(
        "bleu",
        "corpus_bleu_with_fractions_and_products",
        "    matches, totals = [0] * max_n, [0] * max_n\n    c = r = 0\n    for hyp, ref_captions in zip(hyps, refs):",
        "    from fractions import Fraction\n"
        "    split_hyps = [h.split() for h in hyps]\n"
        "    split_refs = [[x.split() for x in rs] for rs in refs]\n"
        "    c = sum(map(len, split_hyps))\n"
        "    if not c:\n"
        "        return [0.0] * max_n\n"
        "    r = 0\n"
        "    for words, ref_list in zip(split_hyps, split_refs):\n"
        "        lengths = sorted(len(x) for x in ref_list)  # sorted, so min keeps the shorter of a tie\n"
        "        r += min(lengths, key=lambda length: abs(length - len(words)))\n"
        "    bp = math.exp(min(0.0, 1 - r / c))  # the lecture's min(1, e^(1 - r/c))\n"
        "    scores, product = [], Fraction(1)\n"
        "    for n in range(1, max_n + 1):\n"
        "        counts = [clipped_counts(w, rl, n) for w, rl in zip(split_hyps, split_refs)]\n"
        "        total = sum(t for _, t in counts)\n"
        "        product *= Fraction(sum(m for m, _ in counts), total) if total else 0\n"
        "        scores.append(bp * float(product) ** (1.0 / n))\n"
        "    return scores\n"
        "    matches, totals = [0] * max_n, [0] * max_n\n"
        "    c = r = 0\n"
        "    for hyp, ref_captions in zip(hyps, refs):",
        correct=True,
        why="exact Fraction precisions, a product and a root, sorted lengths for the tie, "
        "min(1, e^(1 - r/c)), and an early return for an empty corpus",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "bleu",
        "zero_scores_are_ints",
        "            return scores + [0.0] * (max_n - n + 1)",
        "            return scores + [0] * (max_n - n + 1)",
        correct=False,
        why="BLEU-N = 0 as the int 0 where the docstring promises Python floats",
    ),
]
