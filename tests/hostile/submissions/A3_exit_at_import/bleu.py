# hostile: appended to solutions/bleu.py
# A3: leave with status 0 while being imported.
import sys

sys.exit(0)
