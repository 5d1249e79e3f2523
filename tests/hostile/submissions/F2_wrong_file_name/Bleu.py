# hostile: appended to solutions/bleu.py
# F2: the right code under the wrong file name (Bleu.py, not bleu.py).
