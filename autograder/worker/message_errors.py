"""What goes wrong with a message between the grading process and the worker, or with the channel that carries it.
A malformed message and a reply over its budget are the sender's doing; a closed channel, a timeout and an oversized
message are the channel's."""


class MalformedMessage(ValueError):
    """A message that is not one `encode` writes (what a worker's code forged, or a broken channel)."""


class ChannelClosed(EOFError):
    """The other side closed its end (it exited or was killed)."""


class ChannelTimeout(TimeoutError):
    """No complete message arrived before the deadline."""


class MessageTooLarge(ValueError):
    """A message announced more bytes than MAX_MESSAGE."""


class OverBudget(MalformedMessage):
    """A reply that would cost its reader more than its Budget allows. The message is the grader's own sentence."""
