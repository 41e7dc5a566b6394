"""Unit tests of actors/core."""
