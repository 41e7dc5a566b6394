"""The per-user core of Hermes Memory, one folder per layer (docs/design.md): ``core`` (the domain),
``language`` (text processing), ``app`` (the user service), ``runtime`` (the Ray host actors and the routing
to them), ``store`` (SQL and the vector index) and ``adapters`` (embedder, encryption, tracing).

Everything here except ``actors.runtime`` is plain Python with no Ray import, unit-testable alone.
"""
