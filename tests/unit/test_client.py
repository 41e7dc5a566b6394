"""The Python HTTP client: requests it builds, answers it decodes, errors it raises; the async client runs
against the real FastAPI app (gateway faked, no Ray)."""

import asyncio
import json

import httpx
import pytest

from schemas.api import ForgetResult, MemoryList, RecallResponse, WriteResult
from serve.app import create_fastapi_app
from serve.client import AsyncHermesClient, HermesClient, HermesHTTPError
from serve.routes.deps import current_gateway
from tests.unit.test_serve_http import KEY, MEMORY_ID, RecordingGateway


def recording_transport(answers: dict[str, httpx.Response]):
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answers[f"{request.method} {request.url.path}"]

    return httpx.MockTransport(handle), seen


def test_sync_client_sends_key_idempotency_and_body():
    result = WriteResult(user_id="u1", outcomes=[], alerts=[], ignored_turns=1)
    transport, seen = recording_transport(
        {"POST /v1/users/u1/turns": httpx.Response(200, content=result.model_dump_json())}
    )
    body = {"session_id": "s1", "turns": [{"text": "hello", "dialog_id": "d1"}]}
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        assert client.write_turns("u1", body, idempotency_key="k1") == result
    request = seen[0]
    assert request.headers["X-API-Key"] == KEY and request.headers["Idempotency-Key"] == "k1"
    assert json.loads(request.content) == body


def test_sync_client_drops_unset_query_params():
    transport, seen = recording_transport(
        {"GET /v1/users/u1/memories": httpx.Response(200, json={"items": [], "total": 0})}
    )
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        assert client.list_memories("u1", limit=5) == MemoryList(items=[], total=0)
    assert dict(seen[0].url.params) == {"limit": "5", "offset": "0"}


def test_errors_carry_status_body_and_retry_after():
    transport, _ = recording_transport(
        {
            "POST /v1/users/u1/recall": httpx.Response(
                503, json={"error": "store_unavailable", "detail": "sql down"}, headers={"Retry-After": "2"}
            ),
            "GET /healthz": httpx.Response(502, text="<html>bad gateway</html>"),
        }
    )
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        with pytest.raises(HermesHTTPError) as caught:
            client.recall("u1", {"query": "q"})
        assert (caught.value.status, caught.value.error, caught.value.retry_after) == (
            503,
            "store_unavailable",
            2.0,
        )
        with pytest.raises(HermesHTTPError) as foreign:
            client.health()
        assert (foreign.value.status, foreign.value.error) == (502, "http_error")


def test_async_client_against_the_app():
    gateway = RecordingGateway(admin_key="root-key")
    gateway.replies["recall"] = RecallResponse(query="tea", hits=[])
    gateway.replies["forget"] = ForgetResult(memory_id=MEMORY_ID, forgotten=True)
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: gateway

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with AsyncHermesClient("http://hermes", KEY, transport=transport) as client:
            recalled = await client.recall("u1", {"query": "tea", "k": 3})
            with pytest.raises(HermesHTTPError) as caught:
                await client.get_memory("u1", "m_bad")
            forgotten = await client.forget("u1", MEMORY_ID, reason="wrong")
        async with AsyncHermesClient("http://hermes", None, transport=transport) as anonymous:
            created = await anonymous.create_tenant("root-key", {"tenant_id": "newco"})
        return recalled, caught.value, forgotten, created

    recalled, error, forgotten, created = asyncio.run(scenario())
    assert recalled.query == "tea" and gateway.calls[0][3][0].k == 3
    assert (error.status, error.error) == (422, "invalid_request")
    assert (
        forgotten.forgotten and gateway.calls[-1][2] == "forget" and gateway.calls[-1][3][1].reason == "wrong"
    )
    assert created.tenant_id == "newco" and created.api_key == "hm_newco_new"
