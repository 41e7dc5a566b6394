"""The Python client against the real stack: typed answers, typed errors, idempotent writes, and the
async client through a whole conversation; an unreachable service is a connection error, not a hang."""

import asyncio

import pytest

from schemas.api import SessionContext, StartSessionRequest, WriteTurnsRequest
from sdk.client import (
    AsyncHermesClient,
    AuthenticationError,
    ConflictError,
    HermesClient,
    HermesConnectionError,
    InvalidRequestError,
    NotFoundError,
    RetryPolicy,
)
from tests.conftest import free_port


def turns(session: str, *texts: str) -> WriteTurnsRequest:
    return WriteTurnsRequest.model_validate(
        {
            "session_id": session,
            "turns": [{"text": t, "dialog_id": f"{session}-{i}"} for i, t in enumerate(texts)],
        }
    )


def test_sync_client_typed_answers_and_errors(serve_app, tenant_key):
    with HermesClient(serve_app, tenant_key) as client:
        first = client.write_turns("fay", turns("s1", "I'm allergic to peanuts"), idempotency_key="fay-s1")
        again = client.write_turns("fay", turns("s1", "I'm allergic to peanuts"), idempotency_key="fay-s1")
        assert again == first and client.list_memories("fay").total == 1  # the resend was not applied
        memory_id = first.outcomes[0].memory_id
        hits = client.recall("fay", {"query": "what should I avoid cooking?"}).hits
        assert hits and hits[0].memory.memory_id == memory_id
        with pytest.raises(ConflictError):  # only confirmed memories freeze: a gate refusal is a 409
            client.freeze("fay", memory_id, {"reason": "sure"})
        with pytest.raises(NotFoundError):
            client.get_memory("fay", "m_" + "0" * 32)
        with pytest.raises(InvalidRequestError) as invalid:
            client.recall("fay", {"query": "x", "k": 500})
        assert invalid.value.status == 422 and "k" in invalid.value.detail
        forgotten = client.forget("fay", memory_id, {"reason": "asked to forget"})
        assert forgotten.forgotten and client.list_memories("fay").total == 0
    with HermesClient(serve_app, "hm_nobody_wrong") as stranger:
        with pytest.raises(AuthenticationError):
            stranger.recall("fay", {"query": "peanuts"})


def test_async_client_through_a_conversation(serve_app, tenant_key):
    async def conversation() -> tuple[SessionContext, SessionContext, int, int]:
        async with AsyncHermesClient(serve_app, tenant_key) as client:
            await asyncio.gather(
                client.write_turns("gus", turns("s1", "I live in Lisbon")),
                client.write_turns("hal", turns("s1", "I live in Oslo")),
            )
            opened = await client.start_session("gus", StartSessionRequest(session_id="s2"))
            await client.write_turns("gus", turns("s2", "I have a dog named Rex"))
            reopened = await client.start_session("gus", {"session_id": "s2"})
            erased = await client.erase_user("hal", {"reason": "account closed"})
            left = await client.list_memories("hal")
            return opened, reopened, erased.items_removed, left.total

    opened, reopened, removed, left = asyncio.run(conversation())
    assert "Lisbon" in opened.text and "Oslo" not in opened.text
    assert reopened.text == opened.text  # the session's snapshot does not move
    assert removed == 1 and left == 0


def test_unreachable_service_is_a_connection_error():
    quick = RetryPolicy(attempts=2, backoff_seconds=0.01)
    with HermesClient(f"http://127.0.0.1:{free_port()}", "hm_x_y", retry=quick, timeout=2) as client:
        with pytest.raises(HermesConnectionError):
            client.health()
