"""Modal screens: help."""
