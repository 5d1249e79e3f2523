# %% [markdown]
# A captioner trained with teacher forcing never writes a sentence by itself: at test time it only gives,
# for the words so far, a distribution over the next word. Decoding turns those distributions into a
# caption. Three ways, all in `decoding.py`:
#
# - `greedy_decode` takes the most probable word at every step and feeds it back. It is fast, and a
#   first word it regrets can never be taken back.
# - `beam_search` keeps the k best partial captions, scored by their total log-probability. With k = 1
#   it is greedy decoding; with k at least the number of possible sentences it is exhaustive search.
# - `sample_captions` draws each word from softmax(log-probs / temperature): near 0 it approaches greedy
#   decoding, at 1 it follows the model, above 1 it drifts towards noise.
#
# All three see a model only through the decoding protocol, `state = model.init_state(...)` and
# `log_probs, state = model.step(tokens, state)`. So this notebook needs no training: it decodes a small
# random Markov chain whose every sentence can be enumerated, and a caption model built by counting.

# %% setup

# %% [markdown]
# ## Check your module

# %%
grader.check("decoding")

# %% [markdown]
# ## Beam search against exhaustive search
#
# A toy model over three words (ids 3, 4, 5) and three steps: $3^3 = 27$ sentences, few enough to score
# them all. Its state is the step counter. Its table is drawn so that greedy decoding falls into a trap:
# the most likely second word leads to a worse sentence than a less likely one.

# %%
import itertools

import torch
import torch.nn.functional as F

from shared.vocab import START


class ToyMarkov:
    """A fixed random table log p(next word | current word, step) over the words 3, 4, 5."""

    def __init__(self, steps=3, n_vocab=6, seed=9):
        gen = torch.Generator().manual_seed(seed)
        table = torch.randn(steps, n_vocab, n_vocab, generator=gen) * 2
        table[:, :, :3] = float("-inf")  # never PAD, START or END
        self.log_table, self.steps = F.log_softmax(table, -1), steps

    def init_state(self, n):
        return (torch.zeros(n, dtype=torch.long),)

    def step(self, tokens, state):
        (t,) = state
        return self.log_table[t.clamp(max=self.steps - 1), tokens], (t + 1,)


toy = ToyMarkov()


def toy_score(sentence):
    total, previous = 0.0, START
    for t, word in enumerate(sentence):
        total += toy.log_table[t, previous, word].item()
        previous = word
    return total


best = max(itertools.product([3, 4, 5], repeat=3), key=toy_score)
print(f"exhaustive search: best sentence {best}, log-prob {toy_score(best):.3f}")
greedy = decoding.greedy_decode(toy, toy.init_state(1), 3)
print(f"greedy decoding:   {tuple(greedy[0].tolist())}, log-prob {toy_score(greedy[0].tolist()):.3f}")
for k in (1, 2, 3, 27):
    tokens, scores = decoding.beam_search(toy, toy.init_state(1), k, 3)
    print(f"beam k = {k:2d}: best {tuple(tokens[0, 0].tolist())}, log-prob {scores[0, 0].item():.3f}")

# %% [markdown]
# ## A caption model built by counting
#
# `CountCaptioner` counts, over the 2000 training captions, which word follows which at each position.
# At test time it only lets through the colours and shapes a scene contains (its attribute vector), so it
# names objects that are there; but it never sees where they are, nor which colour goes with which shape.
# It follows the decoding protocol, so your decoders run on it unchanged.

# %%
import matplotlib.pyplot as plt
import numpy as np

from shared.metrics import exact_match
from shared.notebook import NOTEBOOK_TEST, NOTEBOOK_TRAIN
from shared.plotting import scene_grid
from shared.scenes import make_scenes
from shared.vocab import COLOR_WORDS, END, PAD, SHAPE_WORDS, T_MAX, VOCAB_SIZE, WORD_TO_ID, decode_batch


class CountCaptioner:
    """log p(next word | current word, position), counted with add-0.1 smoothing; the colours and shapes
    a scene lacks get probability 0. State: (position (N,), allowed words (N, V))."""

    def __init__(self, captions, smoothing=0.1):
        counts = torch.full((captions.shape[1], VOCAB_SIZE, VOCAB_SIZE), smoothing)
        for row in captions.tolist():
            for t in range(1, len(row)):
                counts[t - 1, row[t - 1], row[t]] += 1
                if row[t] == END:
                    break
        counts[..., [PAD, START]] = 0.0
        self.log_table = (counts / counts.sum(-1, keepdim=True)).log()
        self.object_words = torch.tensor([WORD_TO_ID[w] for w in COLOR_WORDS + SHAPE_WORDS])

    def init_state(self, attributes):
        allowed = torch.ones(attributes.shape[0], VOCAB_SIZE, dtype=torch.bool)
        allowed[:, self.object_words] = attributes > 0.5
        return (torch.zeros(attributes.shape[0], dtype=torch.long), allowed)

    def step(self, tokens, state):
        t, allowed = state
        scores = self.log_table[t.clamp(max=self.log_table.shape[0] - 1), tokens]
        return torch.log_softmax(scores.masked_fill(~allowed, float("-inf")), -1), (t + 1, allowed)


def sentence_log_prob(model, state, tokens):
    """Total log-probability of each row of tokens (N, T) up to and including its first END."""
    total = torch.zeros(tokens.shape[0])
    alive = torch.ones(tokens.shape[0], dtype=torch.bool)
    current = torch.full((tokens.shape[0],), START)
    for t in range(tokens.shape[1]):
        log_probs, state = model.step(current, state)
        picked = log_probs.gather(1, tokens[:, t:t + 1]).squeeze(1)
        total += torch.where(alive, picked, torch.zeros_like(picked))
        alive &= tokens[:, t] != END
        current = tokens[:, t]
    return total


train = make_scenes(NOTEBOOK_TRAIN, seed=0, keep_images=False)
test = make_scenes(NOTEBOOK_TEST, seed=1)
counter = CountCaptioner(train.tokens)
max_len = T_MAX - 1

greedy = decoding.greedy_decode(counter, counter.init_state(test.attributes), max_len)
greedy_logp = sentence_log_prob(counter, counter.init_state(test.attributes), greedy)
print(f"greedy: exact match {exact_match(decode_batch(greedy), test.references):.3f}, "
      f"mean log-prob {greedy_logp.mean():.3f}")
widths, beams = [1, 2, 3, 5, 8], {}
for k in widths:
    beams[k] = decoding.beam_search(counter, counter.init_state(test.attributes), k, max_len)
    tokens, scores = beams[k]
    changed = (tokens[:, 0] != greedy).any(1).float().mean()
    print(f"beam k = {k}: exact match {exact_match(decode_batch(tokens[:, 0]), test.references):.3f}, "
          f"mean log-prob {scores[:, 0].mean():.3f}, best caption differs from greedy on {changed:.0%} of scenes")

fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].plot(widths, [exact_match(decode_batch(beams[k][0][:, 0]), test.references) for k in widths], "o-")
axes[0].set(xlabel="beam width k", ylabel="exact match", title="correctness")
axes[1].plot(widths, [beams[k][1][:, 0].mean().item() for k in widths], "s-", color="#c0392b")
axes[1].set(xlabel="beam width k", ylabel="mean log p(best caption)", title="what beam search maximises")
for ax in axes:
    ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()

# %% [markdown]
# Exhaustive search (a beam as wide as the number of captions) finds the most probable caption, so nothing
# can beat it; a wider beam short of that is not always better: it can keep prefixes that look good early,
# drop the one that leads to the best caption, and end lower than a narrower beam. Exact match need not
# follow the log-probability either, because the model itself is wrong about what is likely. Here are a few
# scenes with the greedy caption and the three best beams, each with its total log-probability.

# %%
scenes = [0, 1, 2, 4]
tokens, scores = beams[3]
for i in scenes:
    print(f"scene {i}: references {test.references[i]}")
    print(f"   greedy  {greedy_logp[i]:7.3f}  {decode_batch(greedy[i:i + 1])[0]}")
    for j, caption in enumerate(decode_batch(tokens[i])):
        print(f"   beam {j + 1}  {scores[i, j]:7.3f}  {caption}")
fig = scene_grid(test.images[scenes], [f"scene {i}" for i in scenes], cols=4, size=2.2)
plt.show()

# %% [markdown]
# ## Sampling with a temperature
#
# Twenty samples per scene for six scenes, at five temperatures: how many distinct captions appear, and
# what fraction is correct. The same generator seed gives the same samples, which the cell checks.

# %%
temperatures = [0.2, 0.5, 1.0, 1.5, 3.0]
picked = list(range(6))
distinct, correct = np.zeros((len(picked), len(temperatures))), np.zeros((len(picked), len(temperatures)))
for a, i in enumerate(picked):
    attributes = test.attributes[i:i + 1].expand(20, -1)
    for b, tau in enumerate(temperatures):
        draws = decoding.sample_captions(counter, counter.init_state(attributes), tau, max_len,
                                         generator=torch.Generator().manual_seed(b))
        captions = decode_batch(draws)
        distinct[a, b] = len(set(captions))
        correct[a, b] = np.mean([c in test.references[i] for c in captions])
twice = [decoding.sample_captions(counter, counter.init_state(attributes), 1.0, max_len,
                                  generator=torch.Generator().manual_seed(7)) for _ in range(2)]
assert torch.equal(*twice), "the same generator state must give the same captions"

fig, axes = plt.subplots(1, 2, figsize=(9, 3))
axes[0].plot(temperatures, distinct.mean(0), "o-")
axes[0].set(xlabel="temperature", ylabel="distinct captions of 20", title="diversity")
axes[1].plot(temperatures, correct.mean(0), "s-", color="#27ae60")
axes[1].set(xlabel="temperature", ylabel="fraction correct", ylim=(0, 1), title="correctness")
for ax in axes:
    ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()
print("samples of scene 0 at temperature 1.0:")
for caption in sorted(set(decode_batch(decoding.sample_captions(
        counter, counter.init_state(test.attributes[:1].expand(8, -1)), 1.0, max_len,
        generator=torch.Generator().manual_seed(0))))):
    print("  ", caption)

# %% [markdown]
# With a trained captioner the picture is the same: the lecture's Show and Tell gains a little exact
# match from beam search (0.562 greedy, 0.568 with k = 3 and beyond) while the log-probability of its
# best caption keeps rising, and 12 samples of one scene hold about 2 distinct captions at temperature 0.2 and
# about 9 at 2.5.
