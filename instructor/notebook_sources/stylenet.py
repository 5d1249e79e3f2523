# %% [markdown]
# StyleNet (Gan et al., CVPR 2017) writes captions in a style (factual, romantic, humorous) without
# styled captions paired with images, which are rare. It factors the LSTM's input matrix of all four gates
# into three,
#
# $$W_x = U\, S_{\text{style}}\, V,$$
#
# where $U$ and $V$ are shared by every style and learnt from factual image-caption pairs, and the small
# square factor $S$ is one per style. $S_{\text{romantic}}$ is learnt from romantic text alone, as a
# language model, with everything else frozen. At test time swapping $S$ changes the style.
#
# In `stylenet.py` you write `FactoredLSTMCell.input_weight` and `forward`, and `styled_text_step`, the
# text-only update that may move nothing but the romantic factor and the style words' rows. The training
# demo also uses your Part 1 `caption_loss` and Part 2 `greedy_decode`.

# %% setup

# %% [markdown]
# ## Check your module

# %%
grader.check("stylenet")

# %% [markdown]
# ## The factored cell against PyTorch's LSTM cell
#
# Copy $U S V$ into an `nn.LSTMCell` with the same recurrent weights and biases: one step must agree.
# Then count what the factorisation saves for three styles, at the sizes of the lecture's example (a
# 300-d input, a 512-row matrix, rank 64).

# %%
import torch
from torch import nn

torch.manual_seed(0)
E, H, rank = 48, 96, 32
cell = stylenet.FactoredLSTMCell(E, H, rank)
reference = nn.LSTMCell(E, H)
with torch.no_grad():
    reference.weight_ih.copy_(cell.input_weight())
    reference.weight_hh.copy_(cell.W_h.weight)
    reference.bias_ih.copy_(cell.b)
    reference.bias_hh.copy_(cell.W_h.bias)
x, state = torch.randn(5, E), (torch.randn(5, H), torch.randn(5, H))
(h1, c1), (h2, c2) = cell(x, state), reference(x, state)
print(f"FactoredLSTMCell vs nn.LSTMCell: max difference {max((h1 - h2).abs().max(), (c1 - c2).abs().max()):.1e}")
print(f"input_weight(): {tuple(cell.input_weight().shape)} = U {tuple(cell.U.shape)} S {tuple(cell.S['factual'].shape)} V {tuple(cell.V.shape)}")
change = (cell.input_weight("romantic") - cell.input_weight("factual")).norm() / cell.input_weight("factual").norm()
print(f"the two factors start near the identity: swapping them changes W_x by {change:.1%}")

d_in, d_out, r, styles = 300, 512, 64, 3
dense, shared_uv, per_style = d_out * d_in, d_out * r + r * d_in, r * r
print(f"{styles} styles: {styles * dense:,} parameters as dense matrices, "
      f"{shared_uv + styles * per_style:,} factored ({styles * dense / (shared_uv + styles * per_style):.1f}x fewer)")

# %% [markdown]
# ## The styled step moves only what it may
#
# One `styled_text_step` with an optimizer that would move everything it holds (Adam with weight decay
# over all parameters). Afterwards only the romantic factor and the style words' rows may differ.

# %%
from shared.vocab import STYLE_IDS, VOCAB

torch.manual_seed(0)
model = stylenet.StyleNet()
before = {name: p.detach().clone() for name, p in model.named_parameters()}
optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.1)
romantic_text = stylenet.styled_corpus(16)
state = (torch.zeros(16, model.H), torch.zeros(16, model.H))
loss = stylenet.styled_text_step(model, romantic_text, state, optimizer)
print(f"styled loss {loss:.3f}; parameters that changed:")
for name, p in model.named_parameters():
    moved = (p.detach() != before[name])
    if moved.any():
        rows = sorted({int(i) for i in moved.nonzero()[:, 0]}) if p.dim() and name != "cell.S.romantic" else None
        print(f"  {name}" + ("" if rows is None else f", rows of {', '.join(VOCAB[i] for i in rows)}"))
print("style words:", ", ".join(VOCAB[i] for i in STYLE_IDS))

# %% [markdown]
# ## Paired factual captions, unpaired romantic text
#
# `train_stylenet` alternates a factual batch (image and caption; everything but the romantic factor
# learns) with a romantic batch (text only, through your `styled_text_step`). The romantic corpus rewrites
# the captions of other scenes, "the red circle sits happily above the blue square", so style lives in the
# function words. After a few epochs on the notebooks' 2000 scenes we decode the 200 test scenes under each
# factor and score the style rate (captions holding a style word) and the five content slots (colour and
# shape of both objects, and the relation). The lecture (6000 scenes, 12 epochs) measured a style rate of
# 0.000 factual and 1.000 romantic, with content slots 0.806 and 0.725.

# %%
import matplotlib.pyplot as plt
from decoding import greedy_decode
from show_and_tell import caption_loss

from shared.metrics import style_scores
from shared.notebook import NOTEBOOK_EPOCHS, notebook_data
from shared.plotting import scene_grid
from shared.scenes import make_scenes
from shared.vocab import encode_batch

data = notebook_data()
train, test = data.train, data.test
factual = encode_batch(train.scenes.targets, stylenet.T_STYLE)
trained, history = stylenet.train_stylenet(train.grids, factual, stylenet.styled_corpus(len(train)), caption_loss,
                                           epochs=NOTEBOOK_EPOCHS["stylenet"])
print(f"{NOTEBOOK_EPOCHS['stylenet']} epochs in {history.wall_seconds:.1f} s: factual loss {history.factual_losses[-1]:.3f}, "
      f"romantic loss {history.styled_losses[-1]:.3f}")
scores = stylenet.evaluate_styles(trained, test.grids, test.scenes.references, greedy_decode)
for style, s in scores.items():
    print(f"{style:9s} style rate {s['style_rate']:.3f} | content slots {s['content_slots']:.3f} | "
          "per slot " + ", ".join(f"{v:.2f}" for v in s["per_slot"]))

captions = {s: stylenet.style_captions(trained, test.grids[:4], greedy_decode, s) for s in stylenet.STYLES}
titles = [f"factual: {f}\nromantic: {r}" for f, r in zip(captions["factual"], captions["romantic"])]
scene_grid(make_scenes(4, seed=1).images, titles, cols=2, size=3.6)
plt.show()

# %% [markdown]
# ## Between the two factors
#
# Nothing forces $S$ to be one of the trained factors: `mix` uses $(1 - \lambda) S_{\text{factual}} +
# \lambda S_{\text{romantic}}$. In the lecture the style switched abruptly, between $\lambda = 0.5$ and
# $0.75$, while the content declined only slightly.

# %%
lambdas = [0.0, 0.25, 0.5, 0.75, 1.0]
mixed = [style_scores(stylenet.style_captions(trained, test.grids, greedy_decode, mix=lam), test.scenes.references)
         for lam in lambdas]
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(lambdas, [m["style_rate"] for m in mixed], "o-", color="#c0392b", label="style rate")
ax.plot(lambdas, [m["content_slots"] for m in mixed], "s-", color="#2980b9", label="content slots")
ax.set(xlabel="lambda", ylim=(0, 1.05), title="S = (1 - lambda) S_factual + lambda S_romantic")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()
print("scene 0:", *(f"\n  lambda {lam:4.2f}: {stylenet.style_captions(trained, test.grids[:1], greedy_decode, mix=lam)[0]}"
                     for lam in lambdas))
