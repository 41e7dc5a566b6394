"""The per-user core of Hermes Memory.

Everything here except ``actors.user_actor``, ``actors.directory`` and ``actors.services`` is plain Python
with no Ray import: the gate engine, extraction, scoring and the store adapters are unit-testable alone.
"""
