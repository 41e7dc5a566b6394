"""Unit tests of actors/app."""
