"""The HTTP span middleware (``serve.telemetry.TraceRequests``): named by route template, parented on the
caller's traceparent, written by the JSON-lines exporter — with a local provider, never the global."""

import json

from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from actors.adapters.telemetry import JsonLinesExporter
from serve.telemetry import TraceRequests


def traced_app(provider):
    app = FastAPI()

    @app.get("/v1/users/{user_id}/memories")
    def memories(user_id: str):
        return {"user": user_id}

    app.add_middleware(TraceRequests, tracer_provider=provider)
    return app


def test_http_span_is_named_by_route_and_joins_the_callers_trace(tmp_path):
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(str(tmp_path / "spans.jsonl"))))
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    client = TestClient(traced_app(provider))
    response = client.get(
        "/v1/users/alice/memories", headers={"traceparent": f"00-{trace_id}-{parent_id}-01"}
    )
    assert response.status_code == 200
    (span,) = memory.get_finished_spans()
    assert span.name == "GET /v1/users/{user_id}/memories"
    assert f"{span.context.trace_id:032x}" == trace_id and f"{span.parent.span_id:016x}" == parent_id
    assert span.attributes["http.response.status_code"] == 200
    (line,) = (tmp_path / "spans.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["name"], record["trace_id"], record["parent_id"]) == (span.name, trace_id, parent_id)
    client.get("/nowhere")
    assert memory.get_finished_spans()[-1].attributes["http.response.status_code"] == 404
