"""Zone 3, the grader: hidden and training checks (checks/), the hidden data (context.py, hidden/), the engine
that grades a submission (engine.py), the sandbox's isolation (isolation.py) and every front door (the command
line, batch grading, Gradescope, nbgrader, reports). May import anything."""
