"""Instructor tooling: student stubs from the reference solutions, and the marker lint."""
