"""Exporter selection from the OTEL_* variables (``actors.adapters.telemetry``), never the global provider."""

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

from actors.adapters.telemetry import span_processors

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
