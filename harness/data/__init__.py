"""Data readers: SentEval-layout STS / SICK / SNLI files, and NLI from the hub."""
