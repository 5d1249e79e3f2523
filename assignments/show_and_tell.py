"""Part 1: Show and Tell with a ReLU RNN (Vinyals et al. 2015; Karpathy and Fei-Fei 2015).

A CNN turns the image into a vector v; a recurrent language model turns v into words. The image
enters once, at the first step, as an extra term of the recurrence:

    h_t = relu(W_xh x_t + W_hh h_{t-1} + b + [t == 1] W_ih v)

With W_hh initialised to the identity the state, and the image with it, is carried from step to
step. Training is teacher forcing: the ground-truth prefix goes in, every next word is predicted at
once, and the loss ignores padding.

You write three things, step -> loss -> model:
  1. relu_rnn_step: one step of the recurrence (checked against nn.RNNCell).
  2. caption_loss: the teacher-forcing cross-entropy over non-PAD targets.
  3. ShowTellRNN.init_state / step / forward: the decoder around relu_rnn_step.
ShowTellLSTM (given) is the lecture's counter-example: an LSTM whose initial state holds the image.
Parity with nn.RNNCell: your functions may not call it, and a module that names it or looks names up at run time earns no
credit from the checks against it (the handout's README, "Checked against PyTorch's own ops", lists what counts).

Then two analyses of a trained captioner, the lecture's and the lab's:
  4. Retrieval (the lecture's answer to "caption to image?"): caption_log_probs scores log p(caption | image),
     retrieval_scores scores every image against every caption, recall_at_k ranks the images for each caption.
  5. The lab's image controls: zeroed_features and shuffled_features, the inputs of a captioner that cannot
     see its own image (a captioner that reads the image loses its exact match on both).
"""
# Generated from the reference show_and_tell.py by `python -m instructor stubs`; do not edit by hand.
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from shared.encoder import D_ANN, L_GRID
from shared.vocab import PAD, VOCAB_SIZE


def relu_rnn_step(x: torch.Tensor, h_prev: torch.Tensor, W_xh: torch.Tensor, W_hh: torch.Tensor, b: torch.Tensor,
                  image_term: torch.Tensor | None = None) -> torch.Tensor:
    """One step of the ReLU recurrence.

    Args:
        x: (N, E) inputs (word embeddings) at this step.
        h_prev: (N, H) previous hidden state.
        W_xh: (H, E) input-to-hidden weights.
        W_hh: (H, H) hidden-to-hidden weights.
        b: (H,) bias.
        image_term: (N, H) the image's contribution W_ih v, or None (no image at this step).

    Returns:
        h: (N, H) = relu(x W_xh^T + h_prev W_hh^T + b + image_term).

    With image_term None this is nn.RNNCell(nonlinearity='relu') with weight_ih = W_xh,
    weight_hh = W_hh, bias_ih = b and bias_hh = 0 (agreement to about 1e-6 in float32).
    """
    # TODO (Part 1): implement relu_rnn_step
    raise NotImplementedError("Part 1 (show_and_tell): relu_rnn_step is not implemented yet")


def caption_loss(logits: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
    """Teacher-forcing loss: mean cross-entropy of the next word over non-PAD targets.

    Args:
        logits: (N, T-1, V) scores; logits[:, t] predicts captions[:, t + 1].
        captions: (N, T) long token ids, START first, PAD-padded after END.

    Returns:
        A scalar tensor: the mean over every (n, t) with captions[n, t + 1] != PAD of
        -log softmax(logits[n, t])[captions[n, t + 1]]. Padded positions contribute nothing.
    """
    # TODO (Part 1): implement caption_loss
    raise NotImplementedError("Part 1 (show_and_tell): caption_loss is not implemented yet")


class ShowTellRNN(nn.Module):
    """Karpathy's captioner on a cached annotation grid (the image vector v is a ReLU projection of it).

    Parameters (given):
        fc: Linear(D * L, DV), flattened grid -> image vector v (our "fc7").
        emb: Embedding(V, E) word embeddings.
        W_xh: Linear(E, H), its bias is b.      W_hh: Linear(H, H, bias=False), starts as the identity.
        W_ih: Linear(DV, H, bias=False), the image term.      out: Linear(H, V).
    State: a tuple (h (N, H), image_term (N, H)); image_term is W_ih v before the first word and
    zeros afterwards, so the image enters exactly once.
    """

    def __init__(self, n_vocab: int = VOCAB_SIZE, D: int = D_ANN, L: int = L_GRID, E: int = 32, H: int = 96,
                 DV: int = 64):
        super().__init__()
        self.fc = nn.Linear(D * L, DV)
        self.emb = nn.Embedding(n_vocab, E)
        self.W_xh = nn.Linear(E, H)
        self.W_hh = nn.Linear(H, H, bias=False)
        self.W_ih = nn.Linear(DV, H, bias=False)
        self.out = nn.Linear(H, n_vocab)
        self.H = H
        with torch.no_grad():
            self.W_hh.weight.copy_(torch.eye(H))  # identity recurrence: the state persists at initialisation

    def image_vector(self, features: torch.Tensor) -> torch.Tensor:
        """features: (N, L, D) annotation grid -> v: (N, DV) = relu(fc(flattened grid))."""
        return torch.relu(self.fc(features.flatten(1)))

    def init_state(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """State before the first word.

        Args:
            features: (N, L, D) annotation grids.
        Returns:
            (h, image_term): h (N, H) zeros; image_term (N, H) = W_ih v, consumed by the first step.
        """
        # TODO (Part 1): implement ShowTellRNN.init_state
        raise NotImplementedError("Part 1 (show_and_tell): ShowTellRNN.init_state is not implemented yet")

    def step(self, tokens: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]):
        """One decoding step.

        Args:
            tokens: (N,) long, the current input words.
            state: (h (N, H), image_term (N, H)).
        Returns:
            log_probs: (N, V) log-softmax over the next word.
            state: the new state (h, zeros): after the first step the image term is spent.
        Use relu_rnn_step with this model's W_xh.weight, W_hh.weight and W_xh.bias.
        """
        # TODO (Part 1): implement ShowTellRNN.step
        raise NotImplementedError("Part 1 (show_and_tell): ShowTellRNN.step is not implemented yet")

    def forward(self, features: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
        """Teacher forcing.

        Args:
            features: (N, L, D) annotation grids.
            captions: (N, T) long; inputs are captions[:, :-1].
        Returns:
            logits: (N, T-1, V); logits[:, t] scores the word after captions[:, t].
        With the image term zero this equals nn.RNN(nonlinearity='relu') run on the embedded inputs.
        """
        # TODO (Part 1): implement ShowTellRNN.forward
        raise NotImplementedError("Part 1 (show_and_tell): ShowTellRNN.forward is not implemented yet")


class ShowTellLSTM(nn.Module):
    """The lecture's counter-example (given): the same captioner with an LSTM whose initial state is a
    tanh projection of the image, h0 = tanh(W_h v), c0 = tanh(W_c v). The image enters only there, and a
    small LSTM trained from scratch learns to forget it."""

    def __init__(self, n_vocab: int = VOCAB_SIZE, D: int = D_ANN, L: int = L_GRID, E: int = 32, H: int = 96,
                 DV: int = 64):
        super().__init__()
        self.fc = nn.Linear(D * L, DV)
        self.emb = nn.Embedding(n_vocab, E)
        self.init_h = nn.Linear(DV, H)
        self.init_c = nn.Linear(DV, H)
        self.cell = nn.LSTMCell(E, H)
        self.out = nn.Linear(H, n_vocab)

    def init_state(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """features (N, L, D) -> (h0, c0), each (N, H)."""
        v = torch.relu(self.fc(features.flatten(1)))
        return torch.tanh(self.init_h(v)), torch.tanh(self.init_c(v))

    def step(self, tokens: torch.Tensor, state):
        """tokens (N,) -> (log_probs (N, V), (h, c))."""
        h, c = self.cell(self.emb(tokens), state)
        return F.log_softmax(self.out(h), -1), (h, c)

    def forward(self, features: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: (N, L, D), (N, T) -> logits (N, T-1, V)."""
        state = self.init_state(features)
        x = self.emb(captions[:, :-1])
        hs = []
        for t in range(x.shape[1]):
            state = self.cell(x[:, t], state)
            hs.append(state[0])
        return self.out(torch.stack(hs, 1))


def caption_log_probs(model: nn.Module, features: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
    """log p(caption | image) of each (image, caption) pair under teacher forcing: the score retrieval ranks by.

    Args:
        model: a captioner with forward(features, captions) -> logits (N, T-1, V), logits[:, t] scoring the word
            after captions[:, t] (ShowTellRNN, ShowTellLSTM).
        features: (N, L, D) annotation grids; features[n] is the image of pair n.
        captions: (N, T) long token ids, START first, PAD-padded after END; captions[n] is the caption of pair n.

    Returns:
        (N,) floating tensor (the logits' dtype): entry n is the sum over every t with captions[n, t + 1] != PAD
        of log_softmax(logits[n, t])[captions[n, t + 1]]. START is given, not scored; END is scored (a caption
        also says where it stops); PAD is not. A sum, not a mean: the log-probability of the whole caption.
    """
    # TODO (Part 1): implement caption_log_probs
    raise NotImplementedError("Part 1 (show_and_tell): caption_log_probs is not implemented yet")


def retrieval_scores(model: nn.Module, features: torch.Tensor, captions: torch.Tensor,
                     batch_size: int = 4096) -> torch.Tensor:
    """Every image scored against every caption: scores[i, j] = log p(captions[j] | features[i]).

    Args:
        model: a captioner, as in caption_log_probs.
        features: (I, L, D) annotation grids of I images.
        captions: (C, T) long token ids of C captions.
        batch_size: about how many pairs to score per call of caption_log_probs (a memory bound; whole rows of C
            pairs go together).

    Returns:
        (I, C) floating tensor, every entry computed by caption_log_probs: image i's features paired with caption j.
        Score many pairs per call (repeat_interleave / repeat; one image with all C captions per call is fine): for
        200 images and 200 captions it may call caption_log_probs at most 1,000 times. After the deadline the grader
        ranks about 200 hidden scenes (200 x 200 pairs) with your trained model and stops the model after 20 s. Call it
        under torch.no_grad() when only ranking.
    """
    # TODO (Part 1): implement retrieval_scores
    raise NotImplementedError("Part 1 (show_and_tell): retrieval_scores is not implemented yet")


def recall_at_k(scores: torch.Tensor, k: int) -> float:
    """Caption-to-image recall@k, the lecture's retrieval: for each caption, rank the images by how well they fit it.

    Args:
        scores: (N, N) floating tensor from retrieval_scores, scores[i, j] = log p(caption j | image i), where
            caption j describes image j (the true image of column j is row j).
        k: an int, 1 <= k <= N.

    Returns:
        A Python float in [0, 1]: the fraction of captions j whose true image is among the k best of column j.
        The true image's rank is the number of images i with scores[i, j] >= scores[j, j] (itself included), so
        a tie counts against it: an image scoring exactly as well ranks ahead. (Another scene with the same
        caption text is another image and counts as one ahead when it scores higher.)

    Raises:
        ValueError naming `scores` if it is not a square 2-d tensor; naming `k` if k is not an int in 1..N.
    """
    # TODO (Part 1): implement recall_at_k
    raise NotImplementedError("Part 1 (show_and_tell): recall_at_k is not implemented yet")


def zeroed_features(features: torch.Tensor) -> torch.Tensor:
    """The lab's first control: no image at all.

    Args:
        features: (N, ...) image features of N scenes (annotation grids (N, L, D), attribute vectors (N, A)).

    Returns:
        A new tensor of zeros with the shape, dtype and device of features; features itself is left unchanged.
    """
    # TODO (Part 1): implement zeroed_features
    raise NotImplementedError("Part 1 (show_and_tell): zeroed_features is not implemented yet")


def shuffled_features(features: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """The lab's second control: every scene reads another scene's image.

    Args:
        features: (N, ...) image features of N >= 2 scenes.
        generator: a CPU torch.Generator; the permutation is drawn from it (the same generator state gives the
            same result).

    Returns:
        A new tensor, out[n] = features[perm[n]] for a random permutation perm of 0..N-1 with no fixed point
        (perm[n] != n for every n): the same shape, dtype and device as features, which is left unchanged.

    Raises:
        ValueError naming `features` if N < 2 (no other scene to read).
    """
    # TODO (Part 1): implement shuffled_features
    raise NotImplementedError("Part 1 (show_and_tell): shuffled_features is not implemented yet")
