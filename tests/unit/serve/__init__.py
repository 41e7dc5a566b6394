"""Unit tests of serve."""
