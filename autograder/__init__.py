"""The captionkit grader, in three zones: worker/ runs beside student code, public/ is what a
student may hold (the public checks and what runs them), grader/ is everything else (hidden checks, hidden data,
the engine and the front doors). `python -m autograder` is the grader's command line."""
