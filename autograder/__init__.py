"""The grading engine: checks per part (checks/), the code that runs beside student code (recipes/),
the worker sandbox (sandbox/), the rubric (rubric.json) and the scores (results.py)."""
