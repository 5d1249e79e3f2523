# hostile: appended to solutions/bleu.py
# F2: a package the grader does not have (it works on the student's laptop).
import tensorflow  # noqa: F401
