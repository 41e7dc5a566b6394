"""Data shapes shared by every part of Hermes Memory: enums, identifiers, settings, API models. Imports
nothing from actors, serve or jobs."""
