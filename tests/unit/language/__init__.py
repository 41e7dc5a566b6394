"""Unit tests of actors/language."""
