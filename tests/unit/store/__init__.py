"""Unit tests of actors/store."""
