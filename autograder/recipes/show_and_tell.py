"""Part 1 recipes: the ReLU step, the loss and the captioner, with weights injected by the grader,
and training on the hidden data (decoded with the reference greedy decoder: Part 2 is graded first)."""
from __future__ import annotations

import torch

from autograder.recipes import recipe
from shared.training import seed_everything, train
from shared.vocab import T_MAX
from solutions.decoding import greedy_decode


@recipe()
def train_and_decode(student, data, epochs, batch_size, seed):
    """Train the student's ShowTellRNN with the kit's loop and the student's caption_loss on the grids in
    file `data`; return greedy captions of its test grids and the training curve."""
    d = torch.load(data, weights_only=True)
    grids, tokens = d["grids"], d["tokens"]
    seed_everything(seed)
    model = student.ShowTellRNN()
    history = train(model, lambda m, idx: student.caption_loss(m(grids[idx], tokens[idx]), tokens[idx]),
                    len(tokens), epochs, batch_size, seed=seed)
    with torch.no_grad():
        predicted = greedy_decode(model, model.init_state(d["test_grids"]), T_MAX)
    return {"tokens": predicted, "losses": history.losses}
