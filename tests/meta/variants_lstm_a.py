"""Part 6 variants."""

from tests.meta.variants import Variant

_SCHEDULE_CHAIN = """    if variant == "LSTM":
        return [image_input], None
    if variant == "A1":
        return [attr_input], None
    if variant == "A2":
        return [image_input, attr_input], None
    if variant == "A3":
        return [attr_input, image_input], None
    if variant == "A4":
        return [attr_input], image_input
    return [image_input], attr_input  # A5
"""

_INIT_STATE = """        n = features.shape[0]
        prefix, per_step = schedule(self.variant, self.Tv(self.image_vector(features)), self.Ta(attributes))
        h = features.new_zeros(n, self.H)
        c = features.new_zeros(n, self.H)
        for x in prefix:
            h, c = self.cell(x, (h, c))
        if per_step is None:
            per_step = features.new_zeros(n, self.E)
        return h, c, per_step
"""

VARIANTS = [
    # A schedule that returns nothing detaches nothing: the gradient check is anchored to inputs it must return.
    Variant(
        "lstm_a",
        "schedule_returns_nothing",
        '    ### BEGIN SOLUTION\n    if variant == "LSTM":\n        return [image_input], None\n',
        '    ### BEGIN SOLUTION\n    return [], None\n    if variant == "LSTM":\n        return [image_input], None\n',
        correct=False,
        why="schedule returns an empty prefix and no per-step input for every variant",
    ),
    Variant(
        "lstm_a",
        "a3_feeds_the_image_first",
        "        return [attr_input, image_input], None\n",
        "        return [image_input, attr_input], None\n",
        correct=False,
        why="A3 feeds image then attributes, the order of A2",
    ),
    Variant(
        "lstm_a",
        "a4_and_a5_swapped",
        "        return [attr_input], image_input\n",
        "        return [image_input], attr_input\n",
        correct=False,
        why="A4 repeats the attributes and starts from the image (A5's schedule)",
    ),
    Variant(
        "lstm_a",
        "a4_per_step_image_detached",
        "        return [attr_input], image_input\n",
        "        return [attr_input], image_input.detach()\n",
        correct=False,
        why="the repeated image is cut from the graph: fc and Tv never learn from it",
    ),
    Variant(
        "lstm_a",
        "unknown_variant_falls_through_to_a5",
        "    check_variant(variant)\n    ### BEGIN SOLUTION\n",
        "    ### BEGIN SOLUTION\n",
        correct=False,
        why="the validation line is dropped, so any unknown name gets A5's schedule",
    ),
    Variant(
        "lstm_a",
        "each_prefix_input_from_a_zero_state",
        "            h, c = self.cell(x, (h, c))\n",
        "            h, c = self.cell(x)\n",
        correct=False,
        why="the state is not carried between prefix inputs (A2/A3 keep only the last one)",
    ),
    Variant(
        "lstm_a",
        "zeros_per_step_of_width_H",
        "            per_step = features.new_zeros(n, self.E)\n",
        "            per_step = features.new_zeros(n, self.H)\n",
        correct=False,
        why="the zero per-step vector has the hidden width instead of the embedding width",
    ),
    Variant(
        "lstm_a",
        "image_vector_not_projected",
        "schedule(self.variant, self.Tv(self.image_vector(features)), self.Ta(attributes))",
        "schedule(self.variant, self.image_vector(features), self.Ta(attributes))",
        correct=False,
        why="feeds v instead of Tv(v); runs at the default sizes, where DV == E",
    ),
    Variant(
        "lstm_a",
        "schedule_by_table_with_copies",
        _SCHEDULE_CHAIN,
        """    named = {"image": image_input, "attr": attr_input}
    table = {"LSTM": (["image"], None), "A1": (["attr"], None), "A2": (["image", "attr"], None),
             "A3": (["attr", "image"], None), "A4": (["attr"], "image"), "A5": (["image"], "attr")}
    order, repeated = table[variant]
    return [named[k].clone() for k in order], (None if repeated is None else named[repeated].clone())
""",
        correct=True,
        why="a lookup table returning copies (equal in value, still in the graph)",
    ),
    Variant(
        "lstm_a",
        "init_state_lecture_style",
        _INIT_STATE,
        """        v = self.image_vector(features)
        pre, per = schedule(self.variant, self.Tv(v), self.Ta(attributes))
        n = features.shape[0]
        h = torch.zeros(n, self.H, device=features.device)
        c = torch.zeros(n, self.H, device=features.device)
        for x_ in pre:
            h, c = self.cell(x_, (h, c))
        return (h, c, per if per is not None else torch.zeros(n, self.emb.embedding_dim, device=features.device))
""",
        correct=True,
        why="the lecture's code: zeros in the default dtype, a tuple built in the return",
    ),
    Variant(
        "lstm_a",
        "init_state_cell_default_state",
        _INIT_STATE,
        """        prefix, per_step = schedule(self.variant, self.Tv(self.image_vector(features)), self.Ta(attributes))
        state = None  # nn.LSTMCell starts from zeros when given no state
        for x in prefix:
            state = self.cell(x, state)
        per_step = torch.zeros_like(prefix[0]) if per_step is None else per_step
        return (*state, per_step)
""",
        correct=True,
        why="lets the cell supply the zero state; zeros_like for the per-step vector",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "lstm_a",
        "init_state_returns_a_list",
        "        return h, c, per_step\n",
        "        return [h, c, per_step]\n",
        correct=False,
        why="returns the state as a list: the kit's decoders refuse a state that is not a tuple",
    ),
    Variant(
        "lstm_a",
        "schedule_returns_a_list",
        "        return [attr_input], image_input\n",
        "        return [[attr_input], image_input]\n",
        correct=False,
        why="A4's schedule returns [prefix, per_step], a list, where the docstring promises a tuple",
    ),
    Variant(
        "lstm_a",
        "schedule_prefix_is_a_tuple",
        "        return [image_input, attr_input], None\n",
        "        return (image_input, attr_input), None\n",
        correct=False,
        why="A2's prefix is a tuple where the docstring promises a list of (N, E) tensors",
    ),
]
