# hostile: appended to solutions/bleu.py
# F15: "training at import": the module never finishes importing.
import time

time.sleep(10 ** 6)
