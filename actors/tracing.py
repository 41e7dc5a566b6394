"""Spans for the memory core, through the OpenTelemetry API only.

Without a configured tracer provider these are no-ops; ``serve.telemetry`` configures the SDK from the
standard ``OTEL_*`` variables in every Ray process, and Ray carries the context across actor calls.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace

_tracer = trace.get_tracer("hermes_memory")


@contextmanager
def span(name: str, **attributes: object) -> Iterator[trace.Span]:
    with _tracer.start_as_current_span(name) as current:
        for key, value in attributes.items():
            current.set_attribute(key, value if isinstance(value, str | int | float | bool) else str(value))
        yield current
