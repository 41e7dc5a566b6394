"""Unit tests of actors/core/recall."""
