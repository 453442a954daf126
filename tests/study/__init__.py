"""Tests of harness.study."""
