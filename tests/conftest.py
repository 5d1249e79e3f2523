"""The suite grades many submissions at once on few cores (pytest-xdist): wall-clock limits are scaled so
that load never cuts off correct code. Grading machines run with the factor 1."""
import os

os.environ.setdefault("CAPTIONKIT_TIME_SCALE", "4")
