"""Zone 2, the public checks: what a student may hold. The check registry (checks/), the comparisons
(compare.py), the hypothesis strategies (strategies.py), the launcher of a worker process (client.py,
staging.py) and the runner that scores one part's checks against a worker (runner.py). Imports only the worker
zone, shared/ and third-party packages: never the reference solutions, the grader or hidden data
(tests/test_zones.py)."""
