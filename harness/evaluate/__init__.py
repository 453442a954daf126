"""Evaluation: encode sentences once, score them on STS (and, later, transfer tasks)."""
