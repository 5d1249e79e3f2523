# hostile: appended to solutions/reinforce.py
# A69: update_baseline ignores its inputs and returns a constant all-True tensor of the per-step shape. Compared
# after casting the expected baseline to bool (nonzero -> True), it matched every expected value without a zero.
def update_baseline(baseline, rewards, momentum=0.9):
    return torch.ones(rewards.shape[1:], dtype=torch.bool)
