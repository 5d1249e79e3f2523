# %% [markdown]
# Soft attention reads the expected annotation $\sum_i \alpha_i v_i$. Hard attention picks one location
# $s \sim \alpha$ and reads $v_s$: on average the same vector, so an unbiased estimate of the soft context,
# but a sampled index has no gradient, and the attention weights learn nothing from backpropagation.
#
# The score-function (REINFORCE) estimator fixes that. For an expected reward
# $J(\theta) = \mathbb{E}_{s \sim p_\theta}[f(s)]$,
#
# $$\nabla_\theta J = \mathbb{E}\big[(f(s) - b)\, \nabla_\theta \log p_\theta(s)\big]$$
#
# for any constant baseline $b$, because $\mathbb{E}[\nabla \log p] = 0$. The baseline changes nothing on
# average and can remove most of the variance when every reward shares a large offset, as log-likelihood
# rewards do. The constant that minimises the variance is
# $b^* = \mathbb{E}[f \|\nabla \log p\|^2] / \mathbb{E}[\|\nabla \log p\|^2]$.
#
# In `reinforce.py` you write `sample_location`, `reinforce_loss`, `optimal_baseline` and
# `update_baseline`. Everything below runs on small distributions where the exact answers are known.

# %% setup

# %% [markdown]
# ## Check your module

# %%
grader.check("reinforce")

# %% [markdown]
# ## Hard attention is unbiased
#
# Sixteen locations with 8-d annotations: the mean of $S$ sampled annotations approaches the soft
# context, with an error shrinking like $1/\sqrt{S}$.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

torch.manual_seed(0)
values = torch.randn(16, 8)
weights = torch.softmax(torch.randn(16), 0)
soft_context = weights @ values
generator = torch.Generator().manual_seed(0)
sizes, errors = [10, 100, 1000, 10000, 100000], []
for S in sizes:
    index, _ = reinforce.sample_location(weights.expand(S, -1), generator)
    errors.append(((values[index].mean(0) - soft_context).norm() / soft_context.norm()).item())
    print(f"{S:6d} samples: relative error of the mean hard context {errors[-1]:.4f}")
fig, ax = plt.subplots(figsize=(4.5, 3))
ax.loglog(sizes, errors, "o-", label="measured")
ax.loglog(sizes, errors[0] * np.sqrt(sizes[0] / np.array(sizes)), "--", color="grey", label=r"$\propto 1/\sqrt{S}$")
ax.set(xlabel="samples S", ylabel="relative error", title="mean of hard picks -> soft context")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()

# %% [markdown]
# The sampled annotation carries no gradient; the log-probability of the sample does, and that is all
# REINFORCE needs.

# %%
logits = torch.randn(16, requires_grad=True)
index, log_prob = reinforce.sample_location(torch.softmax(logits, 0).unsqueeze(0), generator)
print(f"sampled location {index.item()}; the annotation read there requires grad: {values[index].requires_grad}")
log_prob.sum().backward()
print(f"gradient of log p(sample) with respect to the attention logits: norm {logits.grad.norm():.4f}")

# %% [markdown]
# ## The estimator on six locations
#
# Six locations with rewards around -8, like log-likelihoods. The exact gradient of $\mathbb{E}[f]$
# comes from enumerating the six outcomes; the estimate is the gradient of `-reinforce_loss` over 20000
# samples. The per-sample gradients are $(f(s) - b)(\mathrm{onehot}(s) - p)$ in closed form, which gives
# their variance for each baseline. The lecture measured 37.6 without a baseline, 0.59 with
# $b = \mathbb{E}[f]$ and 0.53 with $b^*$.

# %%
torch.manual_seed(0)
theta = torch.randn(6, requires_grad=True)
rewards = torch.randn(6) * 2 - 8
p = torch.softmax(theta, 0)
exact = torch.autograd.grad((p * rewards).sum(), theta, retain_graph=True)[0]   # enumerate the outcomes

S = 20000
index, log_prob = reinforce.sample_location(p.expand(S, -1), torch.Generator().manual_seed(1))
f = rewards[index]
score = torch.nn.functional.one_hot(index, 6).float() - p.detach()   # grad of log p(s) w.r.t. theta
b_star = reinforce.optimal_baseline(f, (score ** 2).sum(1))
baselines = {"no baseline": 0.0, "b = E[f]": (p.detach() * rewards).sum().item(), "b*": b_star}
variance, error = {}, {}
for name, b in baselines.items():
    estimate = torch.autograd.grad(-reinforce.reinforce_loss(log_prob, f, b), theta, retain_graph=True)[0]
    error[name] = ((estimate - exact).norm() / exact.norm()).item()
    variance[name] = ((f - b).unsqueeze(1) * score).var(0).sum().item()
    print(f"{name:12s} b = {b:7.3f}: per-sample gradient variance {variance[name]:8.3f}, "
          f"relative error of the estimate {error[name]:.3f}")

fig, ax = plt.subplots(figsize=(4.5, 3))
ax.bar(list(variance), list(variance.values()), color=["#c0392b", "#2980b9", "#27ae60"])
ax.set_yscale("log")
ax.set(ylabel="variance (log scale)", title="a baseline keeps the mean, cuts the variance")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## A moving-average baseline
#
# In training the rewards' mean is unknown and drifts as the model improves, so Xu et al. track it with a
# moving average. Here the reward stream's mean climbs from -8 to -4 over 100 batches of 32; a momentum of
# 0.9 smooths more and lags more than 0.5.

# %%
torch.manual_seed(0)
true_means = torch.linspace(-8, -4, 100)
tracks = {}
for momentum in (0.5, 0.9):
    baseline, tracks[momentum] = None, []
    for mean in true_means:
        baseline = reinforce.update_baseline(baseline, mean + torch.randn(32), momentum)
        tracks[momentum].append(float(baseline))
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(true_means, "k--", label="true mean reward")
for momentum, track in tracks.items():
    ax.plot(track, label=f"momentum {momentum}")
ax.set(xlabel="batch", ylabel="reward", title="update_baseline on a drifting reward")
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()
per_step = reinforce.update_baseline(None, torch.randn(32, 9) - 6)
print(f"rewards of shape (32, 9) give one baseline per step: {tuple(per_step.shape)}")

# %% [markdown]
# ## Learning where to look
#
# The attention logits over the six locations learn by gradient steps on `reinforce_loss`, four samples
# per step, with and without the moving-average baseline; ten runs each. The curves follow the expected
# reward $\sum_i p_i f_i$; the dashed line is the best location's reward. With few samples per step, the runs
# without a baseline wander; the lecture's hard-attention captioner needed the baseline, a normalised
# advantage and soft-context mixing to reach 0.330 exact match (soft attention: 0.593).

# %%
def learn(use_baseline, seed, steps=200, samples=4, lr=0.05):
    generator = torch.Generator().manual_seed(seed)
    logits = torch.zeros(6, requires_grad=True)
    optimizer = torch.optim.SGD([logits], lr=lr)
    baseline, curve = None, []
    for _ in range(steps):
        index, log_prob = reinforce.sample_location(torch.softmax(logits, 0).expand(samples, -1), generator)
        if use_baseline:
            baseline = reinforce.update_baseline(baseline, rewards[index])
        loss = reinforce.reinforce_loss(log_prob, rewards[index], baseline if use_baseline else 0.0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        curve.append((torch.softmax(logits, 0) * rewards).sum().item())
    return curve


fig, axes = plt.subplots(1, 2, figsize=(9, 3), sharey=True)
for ax, use_baseline in zip(axes, (False, True)):
    finals = []
    for seed in range(10):
        curve = learn(use_baseline, seed)
        ax.plot(curve, lw=0.8)
        finals.append(curve[-1])
    ax.axhline(rewards.max().item(), color="k", ls="--", lw=0.8)
    ax.set(xlabel="step", title=("with" if use_baseline else "without") + " the moving-average baseline")
    ax.grid(alpha=0.3)
    print(f"{'with' if use_baseline else 'without'} baseline: expected reward after 200 steps "
          f"{np.mean(finals):.3f} (spread over runs {np.std(finals):.3f})")
axes[0].set_ylabel("expected reward")
plt.tight_layout()
plt.show()
