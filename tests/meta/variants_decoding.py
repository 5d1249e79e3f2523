"""Part 2 variants."""

from tests.meta.variants import Variant

VARIANTS = [
    # A sampler that draws nothing: a caption of END then PAD is reproducible and pads after END; the check is
    # anchored to samples that vary.
    Variant(
        "decoding",
        "sampler_returns_end_then_pad",
        '        raise ValueError(f"temperature: expected a number > 0, got {temperature!r}")\n    ### BEGIN SOLUTION\n',
        '        raise ValueError(f"temperature: expected a number > 0, got {temperature!r}")\n'
        "    return torch.cat([torch.full((n, 1), END), torch.full((n, max_len - 1), PAD)], 1)\n"
        "    ### BEGIN SOLUTION\n",
        correct=False,
        why="every sample is END then PAD, whatever the model and the generator",
    ),
    Variant(
        "decoding",
        "beams_all_impossible",
        '        raise ValueError(f"k: expected a positive int, got {k!r}")\n    ### BEGIN SOLUTION\n',
        '        raise ValueError(f"k: expected a positive int, got {k!r}")\n'
        '    return torch.full((n, k, max_len), PAD), torch.full((n, k), float("-inf"))\n'
        "    ### BEGIN SOLUTION\n",
        correct=False,
        why="every beam PAD and scored -inf, as if no hypothesis existed, whatever the model",
    ),
    Variant(
        "decoding",
        "greedy_without_pad_after_end",
        "        tokens = torch.where(done, torch.full_like(tokens, PAD), log_probs.argmax(-1))\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1)\n    ### END SOLUTION\n\n\n@torch.no_grad()\ndef beam_search",
        "        tokens = log_probs.argmax(-1)\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1)\n    ### END SOLUTION\n\n\n@torch.no_grad()\ndef beam_search",
        correct=False,
        why="keeps decoding after END instead of padding",
    ),
    Variant(
        "decoding",
        "beam_does_not_freeze_finished_beams",
        "        log_probs = torch.where(done.unsqueeze(-1), frozen, log_probs)\n",
        "",
        correct=False,
        why="a finished beam keeps paying for (and emitting) words",
    ),
    Variant(
        "decoding",
        "beam_keeps_only_the_last_score",
        "        candidates = (scores.unsqueeze(-1) + log_probs).reshape(n, k * V)",
        "        candidates = (0 * scores.unsqueeze(-1).clamp(min=-1e30) + log_probs).reshape(n, k * V)",
        correct=False,
        why="ranks candidates by the last word's log-probability, not the total",
    ),
    Variant(
        "decoding",
        "beam_forgets_to_reorder_the_state",
        "        state = reorder_state(state, (torch.arange(n, device=device).unsqueeze(1) * k + beam).reshape(-1))\n",
        "",
        correct=False,
        why="each surviving beam continues from the wrong parent's state",
    ),
    Variant(
        "decoding",
        "beam_starts_every_beam_at_score_zero",
        'scores = torch.full((n, k), float("-inf"), device=device)',
        "scores = torch.zeros(n, k, device=device)",
        correct=False,
        why="the commonest beam-search bug: k identical live beams at the start, so the first "
        "step fills the beam with copies of the same caption",
    ),
    Variant(
        "decoding",
        "sampling_never_advances_the_state",
        "        log_probs, state = model.step(tokens, state)\n        probs = torch.softmax",
        "        log_probs, _ = model.step(tokens, state)\n        probs = torch.softmax",
        correct=False,
        why="every word is drawn from the model's first-step state: only the first word is right",
    ),
    Variant(
        "decoding",
        "sampling_ignores_temperature",
        "        probs = torch.softmax(log_probs / temperature, -1)",
        "        probs = torch.softmax(log_probs, -1)",
        correct=False,
        why="samples at temperature 1 always",
    ),
    Variant(
        "decoding",
        "sampling_by_gumbel_max",
        "        probs = torch.softmax(log_probs / temperature, -1)\n        drawn = torch.multinomial(probs, 1, generator=generator).squeeze(1)",
        "        u = torch.rand(log_probs.shape, generator=generator, dtype=torch.float64, device=device)\n"
        "        drawn = (log_probs / temperature - torch.log(-torch.log(u.clamp_min(1e-300)))).argmax(-1)",
        correct=True,
        why="Gumbel-max: an exact sampler that draws differently from the reference",
    ),
    # The docstring's dtype: token ids are a LongTensor (a float or int32 tensor of ids is a wrong return type).
    Variant(
        "decoding",
        "sampling_returns_float_tokens",
        "drawn)\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1)",
        "drawn)\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1).float()",
        correct=False,
        why="returns float token ids instead of a LongTensor",
    ),
    Variant(
        "decoding",
        "sampling_returns_int32_tokens",
        "drawn)\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1)",
        "drawn)\n        out.append(tokens)\n        done = done | (tokens == END)\n    return torch.stack(out, 1).int()",
        correct=False,
        why="returns int32 token ids instead of a LongTensor",
    ),
    # The docstring's return types (the return-value audit in docs/grader.md).
    Variant(
        "decoding",
        "beam_search_returns_a_list",
        "    return seqs, scores\n",
        "    return [seqs, scores]\n",
        correct=False,
        why="returns [tokens, scores], a list, where the docstring promises a tuple",
    ),
]
