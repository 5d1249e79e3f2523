# %% [markdown]
# Show, Attend and Tell (Xu et al., ICML 2015) keeps the encoder's spatial grid instead of flattening it:
# $L$ annotation vectors $v_1 \dots v_L$, one per cell ($L = 8 \times 8 = 64$ here, $14 \times 14 = 196$
# for VGG in the paper). Before each word the decoder scores every location from its previous state,
# normalises the scores with a softmax, and reads the weighted average
#
# $$z_t = \sum_i \alpha_{t,i}\, v_i, \qquad \alpha_t = \mathrm{softmax}_i\big(k_i \cdot q_t / \sqrt{d}\big).$$
#
# $z_t$ is a differentiable function of the weights, so the model trains with the usual teacher-forcing
# loss, and every word comes with a map of where the model looked.
#
# In `attention.py` you write `attend`, `with_coords` and the decoder's `attention_step`, `forward` and
# `step`. The training demo below also uses your Part 1 `caption_loss` and your Part 2 `greedy_decode`.

# %% setup

# %% [markdown]
# ## Check your module

# %%
grader.check("attention")

# %% [markdown]
# ## One attention step against PyTorch's
#
# With a single query, `F.scaled_dot_product_attention` computes the same context vector.

# %%
import torch
import torch.nn.functional as F

torch.manual_seed(0)
query, keys, values = torch.randn(5, 32), torch.randn(5, 64, 32), torch.randn(5, 64, 32)
context, weights = attention.attend(query, keys, values)
reference = F.scaled_dot_product_attention(query.unsqueeze(1), keys, values).squeeze(1)
print(f"attend vs F.scaled_dot_product_attention: max difference {(context - reference).abs().max():.1e}")
print(f"weights: shape {tuple(weights.shape)}, rows sum to {weights.sum(-1).min():.4f}..{weights.sum(-1).max():.4f}")
uniform = attention.attend(torch.zeros(1, 32), keys[:1], values[:1])[0]
print(f"a zero query gives uniform weights, so the mean annotation: difference {(uniform - values[:1].mean(1)).abs().max():.1e}")

# %% [markdown]
# ## Where each annotation came from
#
# A weighted average of annotation vectors keeps what they say and loses where they were. Our small
# encoder's vectors describe a 4-pixel cell and barely encode its position, so `with_coords` appends each
# cell's normalised row and column (the CoordConv trick): two extra channels, shown here on the 8 x 8 grid.

# %%
import matplotlib.pyplot as plt

coords = attention.with_coords(torch.zeros(1, 64, 48), 8)[0, :, 48:]
fig, axes = plt.subplots(1, 2, figsize=(5.5, 2.6))
for ax, channel, name in zip(axes, coords.T, ("row", "column")):
    shown = ax.imshow(channel.reshape(8, 8), cmap="coolwarm", vmin=-1, vmax=1)
    ax.set(title=f"appended {name} channel", xticks=[], yticks=[])
fig.colorbar(shown, ax=axes, shrink=0.8)
plt.show()
print("top-left cell:", coords[0].tolist(), "| bottom-right cell:", coords[-1].tolist())

# %% [markdown]
# ## Training with and without coordinates
#
# Two soft-attention captioners on the notebooks' 2000 scenes for a few epochs (about 15 seconds in all):
# one on the grids with coordinates, one on the raw 48-d grids. Greedy captions on the 200 test scenes
# are sorted into the failure kinds of `shared.captions`, and the last column isolates the relation word:
# how often the model predicts it right when fed the true prefix. The lecture's full run (6000 scenes,
# 12 epochs) gave 0.593 exact match with coordinates and 0.330 without, the difference coming almost
# entirely from the relation word (123 against 231 wrong relations out of 400 scenes).

# %%
from decoding import greedy_decode
from show_and_tell import caption_loss

from shared.metrics import exact_match, failure_counts
from shared.notebook import NOTEBOOK_EPOCHS, notebook_data
from shared.training import seed_everything, train
from shared.vocab import T_MAX, WORD_TO_ID, decode_batch

data = notebook_data()
test = data.test
inputs = {"with coordinates": (attention.with_coords(data.train.grids, 8), attention.with_coords(test.grids, 8)),
          "without coordinates": (data.train.grids, test.grids)}
tokens = data.train.scenes.tokens
EPOCHS = NOTEBOOK_EPOCHS["attention"]
models, captions = {}, {}
for name, (train_grids, test_grids) in inputs.items():
    seed_everything(0)
    model = attention.AttnCaptioner(D=train_grids.shape[-1])
    history = train(model, lambda m, idx: attention.soft_attention_loss(m, train_grids[idx], tokens[idx], caption_loss),
                    len(data.train), epochs=EPOCHS, batch_size=64)
    models[name] = model
    captions[name] = decode_batch(greedy_decode(model, model.init_state(test_grids), T_MAX - 1))
    print(f"{name}: {EPOCHS} epochs in {history.wall_seconds:.1f} s, loss {history.losses[0]:.3f} -> {history.losses[-1]:.3f}")


def relation_accuracy(model, grids, tokens):
    """Teacher forcing: how often the argmax at the relation word's position is the relation word."""
    with torch.no_grad():
        predicted = model(grids, tokens)[0].argmax(-1)
    targets = tokens[:, 1:]
    relation = torch.isin(targets, torch.tensor([WORD_TO_ID[w] for w in ("above", "below", "left", "right")]))
    return (predicted[relation] == targets[relation]).float().mean().item()


kinds = ("wrong relation", "wrong colour", "wrong shape", "same object twice")
print(f"\n{'':20s} {'exact':>6s} " + " ".join(f"{k:>17s}" for k in kinds) + "  relation word (forced)")
for name, caps in captions.items():
    counts = failure_counts(caps, test.scenes.objects, test.scenes.references)
    print(f"{name:20s} {exact_match(caps, test.scenes.references):6.3f} " + " ".join(f"{counts[k]:17d}" for k in kinds)
          + f"  {relation_accuracy(models[name], inputs[name][1], test.scenes.tokens):22.3f}")

# %% [markdown]
# ## What the model looked at, word by word
#
# Feeding a generated caption back through `forward` returns the attention map that produced each of its
# words. Overlaid on the image, the map should sit on an object while its colour and shape are named.

# %%
from shared.plotting import overlay_attention
from shared.scenes import make_scenes
from shared.vocab import encode_batch

model, test_grids = models["with coordinates"], inputs["with coordinates"][1]
images = make_scenes(len(test), seed=1).images
for i in (0, 3):
    words = captions["with coordinates"][i].split()
    with torch.no_grad():
        _, maps = model(test_grids[i:i + 1], encode_batch([captions["with coordinates"][i]]))
    fig, axes = plt.subplots(1, len(words), figsize=(1.6 * len(words), 1.9))
    for t, (ax, word) in enumerate(zip(axes, words)):
        overlay_attention(ax, images[i], maps[0, t], f'"{word}"')
    mark = "correct" if captions["with coordinates"][i] in test.scenes.references[i] else "wrong"
    fig.suptitle(f"test scene {i} ({mark}); references: {' | '.join(test.scenes.references[i])}", fontsize=8)
    plt.tight_layout()
    plt.show()

with torch.no_grad():
    _, maps = model(test_grids, test.scenes.tokens)
peak = maps.max(-1).values[test.scenes.tokens[:, 1:] != 0].mean()
print(f"mean peak attention weight per word {peak:.3f}; a uniform map would give {1 / 64:.3f} "
      "(lecture, full budget: 0.659)")
