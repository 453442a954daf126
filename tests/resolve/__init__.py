"""Tests of harness.resolve."""
