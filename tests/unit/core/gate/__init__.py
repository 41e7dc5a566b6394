"""Unit tests of actors/core/gate."""
