"""Unit tests of actors/store/vectors."""
