"""Data shapes shared by every part of Hermes Memory: enums, identifiers, settings, tables, API models."""
