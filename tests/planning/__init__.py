"""Tests of harness.planning."""
