# hostile: appended to assignments/bleu.py
# A2: the unimplemented stub, announcing a perfect score on every channel it has: print, sys.__stdout__,
# file descriptors 1 and 2.
import os
import sys

print('{"score": 100.0, "output": "HOSTILE-A2 all tests passed", "tests": []}')
sys.__stdout__.write("HOSTILE-A2 score: 100/100\n")
sys.__stdout__.flush()
os.write(1, b"HOSTILE-A2 PASS 15/15\n")
os.write(2, b"HOSTILE-A2 PASS 15/15\n")
