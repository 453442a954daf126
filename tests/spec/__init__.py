"""Tests of harness.spec."""
