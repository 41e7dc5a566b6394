"""The ingress's share of tracing: one SERVER span per HTTP request (``TraceRequests``) and Serve's own proxy
and replica spans switched on (``serve_tracing_config``), all exported through the provider that
``actors.adapters.telemetry`` installs in every process."""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode

from actors.adapters.tracing import sdk_installed


def no_span_processors() -> list[SpanProcessor]:
    """Serve's exporter hook: the spans go to the provider ``ray_startup_hook`` already installed."""
    return []


def serve_tracing_config() -> Any:
    """Serve's tracing switched on (proxy and replica spans), exporting through our provider."""
    from ray.serve.schema import TracingConfig

    ratio = float(os.environ.get("OTEL_TRACES_SAMPLER_ARG", "1.0"))
    return TracingConfig(
        enabled=True, exporter_import_path="serve.telemetry:no_span_processors", sampling_ratio=ratio
    )


class TraceRequests:
    """ASGI middleware: one SERVER span per HTTP request, named by its route template once routing matched
    (``POST /v1/users/{user_id}/turns``). Its parent is the span already current (Serve's replica span, when
    Serve tracing is on) or else the caller's ``traceparent`` header."""

    def __init__(self, app: Any, tracer_provider: trace.TracerProvider | None = None):
        self.app = app
        self._own_provider = tracer_provider is not None
        self._tracer = trace.get_tracer("hermes_memory.http", tracer_provider=tracer_provider)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # no provider, no span: the request passes straight through (a no-op span and the headers' parse
        # were paid per request)
        if scope["type"] != "http" or not (self._own_provider or sdk_installed()):
            await self.app(scope, receive, send)
            return
        parent = None
        if not trace.get_current_span().get_span_context().is_valid:
            headers = {key.decode("latin-1"): value.decode("latin-1") for key, value in scope["headers"]}
            parent = propagate.extract(headers)
        method = scope["method"]
        status: dict[str, int] = {}

        async def send_and_note(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        name = f"{method} {scope['path']}"
        with self._tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER) as current:
            current.set_attribute("http.request.method", method)
            try:
                await self.app(scope, receive, send_and_note)
            finally:
                route = getattr(scope.get("route"), "path", None)
                if route:
                    current.update_name(f"{method} {route}")
                    current.set_attribute("http.route", route)
                code = status.get("code", 500)
                current.set_attribute("http.response.status_code", code)
                if code >= 500:
                    current.set_status(Status(StatusCode.ERROR))
