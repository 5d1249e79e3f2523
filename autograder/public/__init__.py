"""Zone 2, the public checks: what a student may hold. The check registry and the public checks of each part
(checks/), the comparisons (compare.py), the hypothesis strategies (strategies.py), the launcher of a worker
process (client.py, staging.py) and the otter-grader adapter (otter_checks.py). Imports only the worker zone,
shared/ and third-party packages: never the reference solutions, the grader or hidden data."""
