"""The per-user core of Hermes Memory.

Everything here except ``actors.runtime`` (the host actors and the routing to them) is plain Python with no
Ray import: the gate engine, extraction, scoring, recall and the store adapters are unit-testable alone.
"""
