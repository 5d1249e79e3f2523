"""Zone 1, the worker: everything that runs beside student code, in a separate process per part. The process
entry (main.py), the messages it exchanges (protocol.py), the reference ops it refuses (forbidden.py), memory
release (memory.py), toy models (toys.py) and the recipes that call student code (recipes/). Imports only
itself, shared/, torch, numpy and the standard library: nothing of the public checks, the grader or the
reference solutions; the grader copies this folder and shared/ into the worker's runtime, nothing else."""
