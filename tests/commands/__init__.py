"""Tests of harness.commands."""
