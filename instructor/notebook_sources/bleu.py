# %% [markdown]
# A captioning paper reports BLEU (Papineni et al., ACL 2002) because a generated sentence has to be
# compared with human ones automatically. BLEU counts the n-grams, runs of n words, that a candidate
# shares with the references of its image, and adds two safeguards:
#
# - **clipping**: a candidate n-gram earns credit at most as many times as it occurs in one single
#   reference, so repeating a safe word earns nothing extra;
# - **the brevity penalty** $BP = 1$ if $c > r$, else $e^{1 - r/c}$, with $c$ the candidate words of the
#   corpus and $r$ the lengths of the closest references, so a captioner cannot win by saying less.
#
# The clipped matches and the candidate n-gram counts are summed over the whole corpus before dividing;
# BLEU-N is $BP$ times the geometric mean of the precisions $p_1 \dots p_N$.
#
# In `bleu.py` you write `ngram_counts`, `clipped_counts` and `corpus_bleu`. This notebook checks them on
# cases small enough to work out by hand, then scores a few fake captioners on our scenes to show what
# each order of BLEU can and cannot see.

# %% setup

# %% [markdown]
# ## Check your module
#
# `grader.check` runs this part's public checks on `bleu.py`, the same ones as
# `python -m autograder.public check --part bleu`. Rerun it after every change.

# %%
grader.check("bleu")

# %% [markdown]
# ## Cases you can work out by hand
#
# Papineni's example: seven copies of "the" against two references in which "the" occurs at most twice.
# Then an exact copy of a reference, a candidate of 6 words against a reference of 10 (only the brevity
# penalty is below 1), and one of our scenes described from its other object: every word is right, no
# 4-gram is.

# %%
import math

cat_refs = ["the cat is on the mat".split(), "there is a cat on the mat".split()]
print("clipped unigram matches of 'the' x 7:", bleu.clipped_counts(["the"] * 7, cat_refs, 1), "(expected (2, 7))")
print("an exact copy, BLEU-1..4:", bleu.corpus_bleu(["the cat is on the mat"], [["the cat is on the mat"]]))
short = bleu.corpus_bleu(["the cat is on the mat"], [["the cat is on the mat and it is asleep"]])
print(f"6 words against 10: BLEU-1 {short[0]:.4f}, and exp(1 - 10/6) = {math.exp(1 - 10 / 6):.4f}")
other_side = bleu.corpus_bleu(["a red circle above a blue square"], [["a blue square below a red circle"]])
print("the same scene from the other object, BLEU-1..4:", [round(s, 3) for s in other_side])

# %% [markdown]
# ## Fake captioners on 200 test scenes
#
# Every test scene has two references (one per object it can start from). We score captioners that are
# wrong in known ways: the relation word flipped, the first colour changed, only the first object named,
# the caption of another scene, and one constant caption (the most frequent training target). The
# perfect row copies one reference per scene.

# %%
import random
from collections import Counter

import matplotlib.pyplot as plt
import numpy as np

from shared.metrics import exact_match
from shared.notebook import NOTEBOOK_TEST, NOTEBOOK_TRAIN
from shared.scenes import make_scenes
from shared.vocab import COLOR_WORDS

train = make_scenes(NOTEBOOK_TRAIN, seed=0, keep_images=False)
test = make_scenes(NOTEBOOK_TEST, seed=1, keep_images=False)
rng = random.Random(0)
FLIP = {"above": "below", "below": "above", "left": "right", "right": "left"}


def other_colour(caption):
    words = caption.split()
    words[1] = rng.choice([c for c in COLOR_WORDS if c != words[1]])
    return " ".join(words)


systems = {
    "perfect": list(test.targets),
    "relation flipped": [" ".join(FLIP.get(w, w) for w in c.split()) for c in test.targets],
    "first colour changed": [other_colour(c) for c in test.targets],
    "first object only": [" ".join(c.split()[:3]) for c in test.targets],
    "another scene's caption": rng.sample(list(test.targets), len(test.targets)),
    "constant caption": [Counter(train.targets).most_common(1)[0][0]] * len(test.targets),
}
scores = {name: bleu.corpus_bleu(caps, test.references) for name, caps in systems.items()}
print(f"{'captioner':26s} {'BLEU-1':>7s} {'BLEU-2':>7s} {'BLEU-3':>7s} {'BLEU-4':>7s} {'exact':>7s}")
for name, caps in systems.items():
    row = scores[name] + [exact_match(caps, test.references)]
    print(f"{name:26s} " + " ".join(f"{v:7.3f}" for v in row))

fig, ax = plt.subplots(figsize=(9, 3.2))
width = 0.2
for n in range(4):
    ax.bar(np.arange(len(systems)) + (n - 1.5) * width, [scores[s][n] for s in systems], width, label=f"BLEU-{n + 1}")
ax.set_xticks(range(len(systems)))
ax.set_xticklabels(systems, fontsize=8)
ax.set_ylim(0, 1.05)
ax.legend(fontsize=7, ncol=4)
ax.set_title("what each BLEU order notices", fontsize=9)
plt.tight_layout()
plt.show()

# %% [markdown]
# Read the rows: a flipped relation keeps every word, so BLEU-1 gives it a perfect 1; only the higher
# orders notice, because most of their n-grams cross the relation word (an 8-word "left of" caption
# keeps one 4-gram clear of it, "of a <colour> <shape>", which is why BLEU-4 does not fall to 0). Naming
# the first object only is precise at every order it has: BLEU-1 to BLEU-3 all equal its brevity
# penalty, and with three words it has no 4-gram at all. The constant caption shows why a trivial
# baseline belongs in every results table: its BLEU-1 is far from zero. For comparison, the lecture's
# Show and Tell scores BLEU-1 0.992 and BLEU-4 0.795 on its test set, and its constant caption 0.609 and
# 0.207.
#
# ## Corpus BLEU is not the mean of sentence BLEU
#
# The precisions are pooled over the corpus. Averaging per-sentence scores instead gives a different
# number, most of all for BLEU-4, where a single sentence with no matching 4-gram scores 0.

# %%
for name in ("first colour changed", "another scene's caption"):
    caps = systems[name]
    per_sentence = np.mean([bleu.corpus_bleu([h], [r])[3] for h, r in zip(caps, test.references)])
    print(f"{name:24s} corpus BLEU-4 {scores[name][3]:.3f} | mean of sentence BLEU-4 {per_sentence:.3f}")
