"""Part 2 recipes: run the student's decoders on toy models and on random captioners."""

from __future__ import annotations

import torch

from autograder.worker.recipes import recipe
from autograder.worker.toys import ToyModel


@recipe()
def greedy_toy(student, table, contexts, max_len):
    model = ToyModel(table)
    return student.greedy_decode(model, model.init_state(contexts), max_len)


@recipe()
def beam_toy(student, table, contexts, k, max_len):
    model = ToyModel(table)
    return student.beam_search(model, model.init_state(contexts), k, max_len)


@recipe()
def sample_toy(student, table, contexts, temperature, max_len, generator_seed):
    model = ToyModel(table)
    generator = torch.Generator().manual_seed(generator_seed)
    first = student.sample_captions(model, model.init_state(contexts), temperature, max_len, generator)
    generator = torch.Generator().manual_seed(generator_seed)
    again = student.sample_captions(model, model.init_state(contexts), temperature, max_len, generator)
    return first, again


@recipe()
def inputs_unchanged(student, table, contexts, k, max_len):
    """Run all three decoders; return the state tensors afterwards (they must be unchanged)."""
    model = ToyModel(table)
    state = model.init_state(contexts)
    before = tuple(s.clone() for s in state)
    student.greedy_decode(model, state, max_len)
    student.beam_search(model, state, k, max_len)
    student.sample_captions(model, state, 1.0, max_len, torch.Generator().manual_seed(0))
    return before, tuple(state)
