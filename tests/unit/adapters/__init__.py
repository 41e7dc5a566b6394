"""Unit tests of actors/adapters."""
