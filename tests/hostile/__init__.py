"""Hostile and broken submissions, one per row of the threat catalogue (docs/security.md)."""
