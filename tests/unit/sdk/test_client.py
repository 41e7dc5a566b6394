"""The Python HTTP client: requests it builds, answers it decodes, the typed errors it raises, its retry
policy (httpx MockTransport: pure logic); the async client also runs against the real FastAPI app (gateway
faked, no Ray). Its methods are the HTTP form of the user commands (``actors.app.commands``)."""

import asyncio
import json
import time

import httpx
import pytest

from actors.app.commands import Forget, PreviewTurns, Recall
from schemas.api import ForgetResult, MemoryList, RecallResponse, TurnsPreview, WriteResult
from sdk.client import (
    AsyncHermesClient,
    AuthenticationError,
    ConflictError,
    HermesClient,
    HermesClientError,
    HermesConnectionError,
    HermesHTTPError,
    HermesTimeout,
    InvalidRequestError,
    RateLimitedError,
    RetryPolicy,
    ServerError,
    ServiceUnavailableError,
)
from serve.app import create_fastapi_app
from serve.routes.deps import current_gateway
from tests.unit.serve.test_serve_http import KEY, MEMORY_ID, RecordingGateway

FAST = RetryPolicy(attempts=4, backoff_seconds=0.001)
WRITTEN = WriteResult(user_id="u1", outcomes=[], alerts=[], ignored_turns=1)
TURNS = {"session_id": "s1", "turns": [{"text": "hello", "dialog_id": "d1"}]}


def scripted(*outcomes: httpx.Response | Exception):
    """A transport answering each request with the next outcome (a response, or an exception raised)."""
    seen: list[httpx.Request] = []
    queue = list(outcomes)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        outcome = queue.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    return httpx.MockTransport(handle), seen


def error(status: int, name: str, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(status, json={"error": name, "detail": "details"}, headers=headers)


def ok(model) -> httpx.Response:
    return httpx.Response(200, content=model.model_dump_json())


def test_sync_client_sends_key_idempotency_and_body():
    transport, seen = scripted(ok(WRITTEN))
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        assert client.write_turns("u1", TURNS, idempotency_key="k1") == WRITTEN
    request = seen[0]
    assert request.headers["X-API-Key"] == KEY and request.headers["Idempotency-Key"] == "k1"
    assert json.loads(request.content) == TURNS


def test_sync_client_drops_unset_query_params():
    transport, seen = scripted(httpx.Response(200, json={"items": [], "total": 0}))
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        assert client.list_memories("u1", limit=5) == MemoryList(items=[], total=0)
    assert dict(seen[0].url.params) == {"limit": "5", "offset": "0"}


def test_errors_are_typed_and_carry_status_body_and_retry_after():
    transport, _ = scripted(
        error(503, "store_unavailable", retry_after="60"),
        httpx.Response(502, text="<html>bad gateway</html>"),
        error(401, "unauthorized"),
        error(409, "frozen_item_error"),
        error(422, "invalid_request"),
    )
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        with pytest.raises(ServiceUnavailableError) as unavailable:  # 60 s is over max_retry_after
            client.recall("u1", {"query": "q"})
        assert (unavailable.value.status, unavailable.value.error, unavailable.value.retry_after) == (
            503,
            "store_unavailable",
            60.0,
        )
        with pytest.raises(ServerError) as foreign:  # not retried: a freeze may have landed
            client.freeze("u1", MEMORY_ID, {"reason": "r"})
        assert (foreign.value.status, foreign.value.error) == (502, "http_error")
        with pytest.raises(AuthenticationError):
            client.profile("u1")
        with pytest.raises(ConflictError):
            client.unfreeze("u1", MEMORY_ID, {"reason": "r", "dialog_id": "d1"})
        with pytest.raises(InvalidRequestError):
            client.recall("u1", {"query": ""})
    assert issubclass(ServiceUnavailableError, HermesHTTPError)
    assert issubclass(HermesTimeout, HermesClientError)


def test_a_write_is_retried_with_the_same_idempotency_key():
    transport, seen = scripted(
        error(503, "store_unavailable", retry_after="0"),
        httpx.ReadTimeout("slow"),  # it may have been applied: the same key makes the retry harmless
        httpx.Response(500, text="Internal Server Error"),  # Serve's proxy, when a replica dies
        ok(WRITTEN),
    )
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        assert client.write_turns("u1", TURNS) == WRITTEN
    keys = {request.headers["Idempotency-Key"] for request in seen}
    assert len(seen) == 4 and len(keys) == 1 and keys.pop()  # one key the client made, sent every time


def test_each_write_call_gets_its_own_key():
    transport, seen = scripted(ok(WRITTEN), ok(WRITTEN))
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        client.write_turns("u1", TURNS)
        client.write_turns("u1", TURNS)
    assert seen[0].headers["Idempotency-Key"] != seen[1].headers["Idempotency-Key"]


def test_retry_after_is_honoured():
    transport, seen = scripted(
        error(429, "rate_limited", retry_after="1"), ok(RecallResponse(query="q", hits=[]))
    )
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        started = time.monotonic()
        assert client.recall("u1", {"query": "q"}).query == "q"
    assert time.monotonic() - started >= 1.0 and len(seen) == 2


def test_gives_up_after_the_last_attempt():
    transport, seen = scripted(*[error(429, "rate_limited", retry_after="0")] * 4)
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        with pytest.raises(RateLimitedError):
            client.recall("u1", {"query": "q"})
    assert len(seen) == 4


def test_client_errors_are_not_retried():
    transport, seen = scripted(error(404, "not_found"))
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        with pytest.raises(HermesHTTPError) as caught:
            client.get_memory("u1", MEMORY_ID)
    assert caught.value.status == 404 and len(seen) == 1


def test_an_unsafe_call_is_retried_only_when_it_never_reached_the_server():
    refused, refused_seen = scripted(httpx.ConnectError("refused"), error(409, "not_confirmed"))
    timed_out, timed_out_seen = scripted(httpx.ReadTimeout("slow"), ok(WRITTEN))
    failed, failed_seen = scripted(httpx.Response(500, text="replica died"), ok(WRITTEN))
    freeze = {"reason": "confirmed allergy"}
    with HermesClient("http://hermes", KEY, transport=refused, retry=FAST) as client:
        with pytest.raises(ConflictError):  # never sent the first time: sent again, and answered
            client.freeze("u1", MEMORY_ID, freeze)
    with HermesClient("http://hermes", KEY, transport=timed_out, retry=FAST) as client:
        with pytest.raises(HermesTimeout):  # a freeze that may have landed is not sent again
            client.freeze("u1", MEMORY_ID, freeze)
    with HermesClient("http://hermes", KEY, transport=failed, retry=FAST) as client:
        with pytest.raises(ServerError):  # a 500 says nothing of whether it landed
            client.freeze("u1", MEMORY_ID, freeze)
    assert len(refused_seen) == 2 and len(timed_out_seen) == 1 and len(failed_seen) == 1


def test_unreachable_service_raises_connection_error():
    transport, seen = scripted(*[httpx.ConnectError("refused")] * 4)
    with HermesClient("http://hermes", KEY, transport=transport, retry=FAST) as client:
        with pytest.raises(HermesConnectionError):
            client.health()
    assert len(seen) == 4


def test_an_id_outside_its_alphabet_never_leaves_the_client():
    transport, seen = scripted()
    with HermesClient("http://hermes", KEY, transport=transport) as client:
        for user_id in ("../admin", "a/b", ""):
            with pytest.raises(InvalidRequestError):
                client.recall(user_id, {"query": "q"})
        with pytest.raises(InvalidRequestError):
            client.forget("u1", "m_../../x")
    assert seen == []


def test_async_client_retries_and_against_the_app():
    gateway = RecordingGateway(admin_key="root-key")
    gateway.replies[Recall] = RecallResponse(query="tea", hits=[])
    gateway.replies[Forget] = ForgetResult(memory_id=MEMORY_ID, forgotten=True)
    gateway.replies[PreviewTurns] = TurnsPreview(user_id="u1", outcomes=[], alerts=[], ignored_turns=1)
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: gateway
    flaky, flaky_seen = scripted(error(503, "actor_unavailable", retry_after="0"), ok(WRITTEN))

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with AsyncHermesClient("http://hermes", KEY, transport=transport) as client:
            recalled = await client.recall("u1", {"query": "tea", "k": 3})
            with pytest.raises(InvalidRequestError) as caught:
                await client.recall("u1", {"query": "tea", "k": 999})
            forgotten = await client.forget("u1", MEMORY_ID, {"reason": "wrong"})
            turn = {"text": "hi", "dialog_id": "d1"}
            previewed = await client.preview_turns("u1", {"session_id": "s1", "turns": [turn]})
        async with AsyncHermesClient("http://hermes", None, transport=transport) as anonymous:
            created = await anonymous.create_tenant("root-key", {"tenant_id": "newco"})
        async with AsyncHermesClient("http://hermes", KEY, transport=flaky, retry=FAST) as client:
            written = await client.write_memory("u1", {"content": "x"}, idempotency_key="w-1")
        return recalled, caught.value, forgotten, previewed, created, written

    recalled, error_, forgotten, previewed, created, written = asyncio.run(scenario())
    assert recalled.query == "tea" and gateway.calls[0][2] == Recall(request={"query": "tea", "k": 3})
    assert (error_.status, error_.error) == (422, "invalid_request")
    assert forgotten.forgotten
    assert gateway.calls[1][2] == Forget(memory_id=MEMORY_ID, request={"reason": "wrong"})
    assert isinstance(previewed, TurnsPreview) and previewed.ignored_turns == 1
    turns = [{"text": "hi", "dialog_id": "d1"}]
    assert gateway.calls[2][2] == PreviewTurns(request={"session_id": "s1", "turns": turns})
    assert created.tenant_id == "newco" and created.api_key == "hm_newco_new"
    assert written == WRITTEN and [r.headers["Idempotency-Key"] for r in flaky_seen] == ["w-1", "w-1"]
