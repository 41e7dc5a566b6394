"""Unit tests of actors/store/sql."""
