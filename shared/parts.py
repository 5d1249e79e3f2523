"""The seven parts of the assignment: module name, number and title, in order."""
from __future__ import annotations

import re
from typing import NamedTuple


class Part(NamedTuple):
    number: int
    module: str
    title: str


PARTS = (
    Part(1, "show_and_tell", "Show and Tell with a ReLU RNN"),
    Part(2, "decoding", "Greedy decoding, beam search and sampling"),
    Part(3, "bleu", "BLEU from scratch"),
    Part(4, "attention", "Soft attention (Show, Attend and Tell)"),
    Part(5, "reinforce", "Hard attention and the score-function estimator"),
    Part(6, "lstm_a", "Where to inject attributes (LSTM-A1..A5)"),
    Part(7, "stylenet", "StyleNet's factored LSTM"),
)
MODULES = tuple(p.module for p in PARTS)
BY_MODULE = {p.module: p for p in PARTS}

# The message every generated stub raises: an unwritten TODO, which every output shows as one line.
TODO_MESSAGE = re.compile(r"Part (?P<number>\d+) \((?P<module>\w+)\): (?P<function>[\w.]+) is not implemented yet")
