# hostile: appended to solutions/bleu.py
# A26: the worker's reply pipe is descriptor 4 (REPLIES); at import, send the grader a start-up message of the
# wrong shape before the worker's own. A grader that reads its fields unchecked stops grading before it kills
# and sweeps anything.

from autograder.worker import protocol as _protocol

_replies = 4    # the worker's reply pipe (autograder/worker/main.py, REPLIES)
_protocol.send(_replies, {"ready": False, "error": "forged"})
