"""The training loop shared by every method."""
