"""Student modules for the seven parts, generated from the reference solutions."""
