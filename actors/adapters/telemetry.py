"""OpenTelemetry SDK setup for every Hermes process, chosen by the standard ``OTEL_*`` variables.

Exporters:

* **OTLP/HTTP** when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set,
  unless ``OTEL_TRACES_EXPORTER`` names other exporters without ``otlp``; the exporter reads its own
  ``OTEL_EXPORTER_OTLP_*`` settings (headers, timeout, compression);
* **console** when ``OTEL_TRACES_EXPORTER`` includes ``console``;
* a **JSON-lines file** when ``HERMES_TRACE_FILE`` is set (one span per line, appended by every process:
  local debugging, and how the tests read a real request's spans);
* **none** otherwise (``OTEL_TRACES_EXPORTER=none`` turns all off): no SDK provider is installed and the
  spans of ``actors.adapters.tracing`` stay free no-ops.

How it reaches every process: the local stack passes ``ray_startup_hook`` as Ray's ``_tracing_startup_hook``
(on a cluster: ``ray start --tracing-startup-hook=actors.adapters.telemetry:ray_startup_hook``), which Ray
runs in every worker and driver that connects — Serve replicas and proxies, the user hosts and their pool,
Ray Data workers, job drivers. Serve's own proxy and replica spans are switched on by ``serve.telemetry``
and land in the same provider. The trace context also travels explicitly with every call to a Hermes actor
(``actors.adapters.tracing.inject_context`` / ``attach_context``), so one request is one trace across
processes.
Service name and resource attributes: ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` (default name
``hermes-memory``); sampling: ``OTEL_TRACES_SAMPLER`` / ``OTEL_TRACES_SAMPLER_ARG`` (default: always, and
children follow their parent).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

TRACE_FILE_ENV = "HERMES_TRACE_FILE"
DEFAULT_SERVICE_NAME = "hermes-memory"
_configured = False
_lock = threading.Lock()


def _exporter_names() -> set[str]:
    names = os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")
    return {name.strip().lower() for name in names if name.strip()}


def _otlp_endpoint() -> str:
    traces_only = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    return traces_only or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")


def span_processors(trace_file: str | None = None) -> list[SpanProcessor]:
    """The processors the environment asks for (possibly none)."""
    names = _exporter_names()
    trace_file = os.environ.get(TRACE_FILE_ENV, "") if trace_file is None else trace_file
    if "none" in names:
        return []
    processors: list[SpanProcessor] = []
    if _otlp_endpoint() and (not names or "otlp" in names):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        processors.append(BatchSpanProcessor(OTLPSpanExporter()))
    if "console" in names:
        processors.append(SimpleSpanProcessor(ConsoleSpanExporter()))
    if trace_file:
        processors.append(SimpleSpanProcessor(JsonLinesExporter(trace_file)))
    return processors


def tracing_requested(trace_file: str | None = None) -> bool:
    return bool(span_processors(trace_file))


def configure(trace_file: str | None = None) -> bool:
    """Install the SDK tracer provider in this process, once; True when spans are being exported.

    A provider someone else installed first (Serve, a test) is left as it is.
    """
    global _configured
    with _lock:
        if _configured:
            return True
        if isinstance(trace.get_tracer_provider(), TracerProvider):
            _configured = True
            return True
        processors = span_processors(trace_file)
        if not processors:
            return False
        name = os.environ.get("OTEL_SERVICE_NAME", DEFAULT_SERVICE_NAME)
        provider = TracerProvider(resource=Resource.create({"service.name": name}))
        for processor in processors:
            provider.add_span_processor(processor)
        trace.set_tracer_provider(provider)
        _configured = True
        return True


def ray_startup_hook() -> None:
    """Ray's ``_tracing_startup_hook``: run by every Ray worker and driver as it connects."""
    configure()


def flush(timeout_millis: int = 5000) -> None:
    provider = trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        provider.force_flush(timeout_millis)


class JsonLinesExporter(SpanExporter):
    """One JSON object per finished span, appended to a file shared by every process of the stack."""

    def __init__(self, path: str):
        self.path = path
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(span_record(span)) + "\n" for span in spans)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(lines)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def span_record(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    assert context is not None  # a recorded span always has one
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent is not None else None,
        "kind": span.kind.name,
        "start": span.start_time,
        "end": span.end_time,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
        "pid": os.getpid(),
        "service": (span.resource.attributes or {}).get("service.name"),
    }
