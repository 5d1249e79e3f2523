# hostile: appended to solutions/bleu.py
# A26: the worker's reply pipe is named on its command line; at import, send the grader a start-up message of the
# wrong shape before the worker's own. A grader that reads its fields unchecked stops grading before it kills
# and sweeps anything.
import sys as _sys

from autograder.worker import protocol as _protocol

_replies = int(_sys.argv[_sys.argv.index("--replies") + 1])
_protocol.send(_replies, {"ready": False, "error": "forged"})
