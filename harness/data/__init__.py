"""data layer (in progress)."""
