"""One real request is one trace: a stack started as a user starts it (``hermes-memory up --detach``, its own
Ray with the tracing hook, Serve tracing on) exports spans to a JSON-lines file chosen by
``HERMES_TRACE_FILE``; a write sent with a W3C ``traceparent`` must come back as spans of that trace, from the
HTTP request through the Serve replica to the user's host (another process), its embedding and its SQL
commit — each a descendant of the one before. The vector index is brought up to date after the answer,
from the outbox, in a trace of its own. A job run is traced too.
"""

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

pytestmark = [pytest.mark.stack, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("hermes-memory")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "cli.main"]
    return subprocess.run(
        [*command, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def traced_stack(tmp_path_factory):
    home = tmp_path_factory.mktemp("traced")
    spans = home / "spans.jsonl"
    env = {**os.environ, "HERMES_MEMORY_HOME": str(home), "HERMES_TRACE_FILE": str(spans)}
    for name in ("RAY_ADDRESS", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        env.pop(name, None)  # the stack starts its own Ray; spans go to the file only
    port = free_port()
    started = cli("up", "--detach", "--port", str(port), "--timeout", "280", env=env, timeout=320)
    try:
        log = (home / "stack.log").read_text() if (home / "stack.log").exists() else ""
        assert started.returncode == 0, started.stdout + started.stderr + log[-3000:]
        yield f"http://127.0.0.1:{port}", (home / "demo.key").read_text().strip(), spans, env
    finally:
        cli("down", env=env, timeout=120)


def read_spans(path: Path, trace_id: str, wanted: set[str], timeout: float = 30) -> dict[str, dict]:
    """The trace's spans by name (the first of each name), once every wanted name has been exported."""
    deadline = time.monotonic() + timeout
    while True:
        found: dict[str, dict] = {}
        for line in path.read_text().splitlines() if path.exists() else []:
            record = json.loads(line)
            if record["trace_id"] == trace_id:
                found.setdefault(record["name"], record)
        if wanted <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def ancestors(span: dict, by_id: dict[str, dict]) -> list[str]:
    names, parent = [], span["parent_id"]
    while parent in by_id:
        names.append(by_id[parent]["name"])
        parent = by_id[parent]["parent_id"]
    return names


def test_a_write_is_one_trace_from_http_through_the_host_to_sql(traced_stack):
    base, key, spans_file, _ = traced_stack
    trace_id, caller_span = secrets.token_hex(16), secrets.token_hex(8)
    response = httpx.post(
        f"{base}/v1/users/ada/turns",
        json={"session_id": "s1", "turns": [{"text": "I'm allergic to peanuts", "dialog_id": "d1"}]},
        headers={"X-API-Key": key, "traceparent": f"00-{trace_id}-{caller_span}-01"},
        timeout=120,
    )
    assert response.status_code == 200, response.text
    http_span = "POST /v1/users/{user_id}/turns"
    # a write embeds its passages with their token states, which the learned reader reads
    embed = "embedder.embed_passages_with_states"
    chain = [http_span, "upsert_memory", "host.write_turns", embed, "sql.commit"]
    found = read_spans(spans_file, trace_id, set(chain))
    assert set(chain) <= set(found), sorted(found)

    everything = [json.loads(line) for line in spans_file.read_text().splitlines()]
    by_id = {s["span_id"]: s for s in everything if s["trace_id"] == trace_id}
    root = found[http_span]
    assert (
        caller_span in _ids_up(root, by_id) or root["parent_id"] == caller_span
    )  # joined the caller's trace
    expected_ancestry = {
        "upsert_memory": http_span,
        "host.write_turns": "upsert_memory",
        embed: "host.write_turns",
        "sql.commit": "host.write_turns",
    }
    for child, parent in expected_ancestry.items():
        assert parent in ancestors(found[child], by_id), (child, ancestors(found[child], by_id))
    processes = {name: found[name]["pid"] for name in chain}
    assert processes["host.write_turns"] != processes["upsert_memory"]
    memory_span = found["upsert_memory"]["attributes"]  # by OpenTelemetry's gen_ai.memory.* conventions
    assert (
        memory_span["gen_ai.operation.name"] == "upsert_memory"
        and memory_span["hermes.command"] == "write_turns"
    )
    assert memory_span["gen_ai.memory.store.id"] == memory_span["tenant_id"]
    assert (
        memory_span["gen_ai.provider.name"] == "hermes_memory"
        and memory_span["gen_ai.memory.record.count"] == 1
    )
    assert processes["sql.commit"] == processes[embed] == processes["host.write_turns"]
    # the index is synced from the outbox by the same host, after the answer
    deadline = time.monotonic() + 30
    while not any(json.loads(line)["name"] == "outbox.apply" for line in spans_file.read_text().splitlines()):
        assert time.monotonic() < deadline, "no outbox.apply span"
        time.sleep(0.5)


def _ids_up(span: dict, by_id: dict[str, dict]) -> set[str]:
    ids, parent = set(), span["parent_id"]
    while parent:
        ids.add(parent)
        parent = by_id.get(parent, {}).get("parent_id")
    return ids


def test_a_job_run_is_traced_from_its_driver_into_the_workers(traced_stack):
    _, _, spans_file, env = traced_stack
    result = cli("jobs", "consolidate", "--tenant", "demo", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["users"] >= 1 and report["failed"] == 0
    records = [json.loads(line) for line in spans_file.read_text().splitlines()]
    (job,) = [r for r in records if r["name"] == "job.consolidate"]
    in_trace = {r["span_id"]: r for r in records if r["trace_id"] == job["trace_id"]}
    batches = [r for r in in_trace.values() if r["name"] == "consolidate.batch"]
    assert batches and all("job.consolidate" in ancestors(b, in_trace) for b in batches)
    assert all(b["pid"] != job["pid"] for b in batches)  # Ray Data workers, not the driver
    passes = [r for r in in_trace.values() if r["name"] == "gate.consolidate"]
    assert passes and all("consolidate.batch" in ancestors(p, in_trace) for p in passes)
    assert job["attributes"]["report.users"] == report["users"]
