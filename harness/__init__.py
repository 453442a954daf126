"""harness: run, track and report contrastive sentence-embedding experiments."""

__version__ = "0.1.0"
