"""Zone 2, the public checks: what a student may hold. The check registry and each part's public checks (checks/),
the comparisons (compare.py), the hypothesis strategies (strategies.py), golden data (golden/), the launcher of a
worker process (client/, staging.py), the runner that scores one part's checks against a worker (runner.py), and
the public checker built on them (checker.py, `python -m autograder.public check`; otter_checks.py for the
notebooks). Imports only the worker zone, shared/ and third-party packages: never the reference solutions, the
grader or hidden data (the kit's tests prove it)."""
