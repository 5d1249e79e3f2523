# hostile: appended to solutions/decoding.py
# A32: the grader counts the sampled tokens with bincount, which allocates one slot per value up to the largest:
# one sampled token id of 4e7 makes the grader allocate hundreds of MB.
_reference_sample_captions = sample_captions


def sample_captions(model, state, temperature, max_len, generator):
    tokens = _reference_sample_captions(model, state, temperature, max_len, generator)
    tokens = tokens.clone()
    tokens[0, 0] = 40_000_000
    return tokens
