# hostile: appended to solutions/bleu.py
# A3: leave with status 0 while being imported, skipping every handler.
import os

os._exit(0)
