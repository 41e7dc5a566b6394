"""Exporter selection from the OTEL_* variables, the JSON-lines span file, and the HTTP span middleware
(named by route template, parented on the caller's traceparent) — with a local provider, never the global."""

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from serve.telemetry import JsonLinesExporter, TraceRequests, span_processors

OTEL_VARIABLES = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in (*OTEL_VARIABLES, "HERMES_TRACE_FILE"):
        monkeypatch.delenv(name, raising=False)


def test_no_variables_no_exporter():
    assert span_processors() == []


def test_an_otlp_endpoint_selects_the_otlp_http_exporter(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    (processor,) = span_processors()
    assert isinstance(processor, BatchSpanProcessor)
    assert isinstance(processor._batch_processor._exporter, OTLPSpanExporter)


def test_console_and_file_exporters_and_none_overrides_everything(monkeypatch, tmp_path):
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")  # not asked for: no otlp
    processors = span_processors(str(tmp_path / "spans.jsonl"))
    assert all(isinstance(p, SimpleSpanProcessor) for p in processors)
    assert sorted(type(p.span_exporter).__name__ for p in processors) == [
        "ConsoleSpanExporter",
        "JsonLinesExporter",
    ]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert span_processors(str(tmp_path / "spans.jsonl")) == []


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
