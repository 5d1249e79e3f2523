"""Reference solutions: the single source of the seven part modules and their student stubs."""
