"""Unit tests of schemas."""
