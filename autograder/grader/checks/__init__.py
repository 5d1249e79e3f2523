"""The checks of every part, one module per part; they register with autograder.public.checks.check."""
