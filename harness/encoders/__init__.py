"""Encoder (HF AutoModel + pooling) and task heads."""
