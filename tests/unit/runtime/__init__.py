"""Unit tests of actors/runtime."""
