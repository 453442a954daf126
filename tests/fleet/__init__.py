"""Tests of harness.fleet."""
