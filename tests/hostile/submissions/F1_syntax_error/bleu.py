# hostile: appended to solutions/bleu.py
# F1: an honest slip at the end of an otherwise correct module.
def helper(:
    return None
