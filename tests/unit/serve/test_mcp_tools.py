"""The MCP tools without Ray: the SDK's in-process client against ``mcp_door.tools.memory_server`` over the
real gateway (its trip to the user's host recorded, as in ``test_serve_http``). Each tool builds the user
command the HTTP route of the same operation builds; a bound connection reaches its user only; a failure is
the HTTP API's ``error: detail``; and ``/mcp`` refuses a request without a valid key before MCP reads it."""

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from starlette.datastructures import Headers

from actors.app.commands import Forget, ListMemories, Recall, Unfreeze, WriteMemory, WriteTurns
from actors.core.tenancy import KeyGrant
from mcp_door.tools import Caller, memory_server
from schemas.api import ForgetResult, MemoryList, RecallResponse, WriteResult
from schemas.endpoints import RECALL
from schemas.errors import Forbidden, NotFound
from serve.app import create_fastapi_app
from serve.errors import error_body
from serve.mcp import TenantOperations, api_key_of
from serve.routes.deps import current_gateway
from tests.unit.serve.test_serve_http import KEY, MEMORY_ID, RecordingGateway

USER_IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,20}", fullmatch=True)


def run_tools(gateway: RecordingGateway, bound_user: str | None, script) -> Any:
    caller = Caller(TenantOperations(gateway, KeyGrant("acme", bound_user)), bound_user=bound_user)

    async def caller_of(_):
        return caller

    async def session():
        async with Client(memory_server(caller_of, error_body)) as client:
            return await script(client)

    return asyncio.run(session())


def failure(result, tool: str) -> str:
    assert result.is_error
    text = result.content[0].text
    prefix = f"Error executing tool {tool}: "
    assert text.startswith(prefix)
    return text[len(prefix) :]


def test_each_tool_runs_the_command_of_its_operation():
    gateway = RecordingGateway()
    gateway.replies[WriteTurns] = WriteResult(user_id="u1", outcomes=[], alerts=[], ignored_turns=1)
    gateway.replies[WriteMemory] = WriteResult(user_id="u1", outcomes=[], alerts=[], ignored_turns=0)
    gateway.replies[Recall] = RecallResponse(query="tea?", hits=[])
    gateway.replies[ListMemories] = MemoryList(items=[], total=0)
    gateway.replies[Forget] = ForgetResult(memory_id=MEMORY_ID, forgotten=True)

    async def script(client: Client):
        await client.call_tool("remember", {"user_id": "u1", "session_id": "s1", "text": "I like tea"})
        await client.call_tool(
            "remember",
            {"user_id": "u1", "session_id": "s1", "text": "tea", "kind": "preference", "dialog_id": "d9"},
        )
        await client.call_tool("recall", {"user_id": "u1", "query": "tea?", "k": 3})
        await client.call_tool("list_memories", {"user_id": "u1", "layer": "core", "limit": 7})
        await client.call_tool("forget", {"user_id": "u1", "memory_id": MEMORY_ID, "reason": "asked"})

    run_tools(gateway, None, script)
    commands = [(tenant, user, command) for tenant, user, command in gateway.calls]
    assert all(tenant == "acme" and user == "u1" for tenant, user, _ in commands)
    turn, memory, recall, listing, forget = (command for _, _, command in commands)
    assert type(turn) is WriteTurns and turn.request.turns[0].text == "I like tea" and turn.request_id
    assert type(memory) is WriteMemory and memory.request.kind == "preference"
    assert memory.request.dialog_ids == ["d9"]
    assert type(recall) is Recall and recall.request.k == 3
    assert type(listing) is ListMemories and (listing.layer, listing.limit) == ("core", 7)
    assert type(forget) is Forget and forget.request.reason == "asked"


@settings(max_examples=25, deadline=None)
@given(bound=USER_IDS, named=st.one_of(st.none(), USER_IDS))
def test_a_bound_connection_reaches_its_user_only(bound, named):
    gateway = RecordingGateway()
    gateway.replies[Recall] = RecallResponse(query="q", hits=[])
    arguments = {"query": "q"} | ({"user_id": named} if named is not None else {})
    result = run_tools(gateway, bound, lambda client: client.call_tool("recall", arguments))
    if named in (None, "", bound):
        assert not result.is_error and [user for _, user, _ in gateway.calls] == [bound]
    else:
        assert failure(result, "recall") == f"forbidden: this connection is bound to user {bound!r}"
        assert gateway.calls == []  # nothing reached any user


def test_failures_carry_the_http_words():
    gateway = RecordingGateway()
    gateway.replies[Unfreeze] = NotFound(f"no memory {MEMORY_ID}")

    async def script(client: Client):
        return (
            await client.call_tool("recall", {"query": "q"}),
            await client.call_tool("recall", {"user_id": "u1", "query": "q", "k": 500}),
            await client.call_tool(
                "unfreeze", {"user_id": "u1", "memory_id": MEMORY_ID, "reason": "r", "dialog_id": "d1"}
            ),
            await client.call_tool("forget", {"user_id": "u1", "memory_id": "m_zz"}),
        )

    no_user, too_many, missing, bad_id = run_tools(gateway, None, script)
    assert failure(no_user, "recall").startswith("invalid_request: user_id is required")
    assert failure(too_many, "recall") == (
        "invalid_request: body.k: Input should be less than or equal to 50"
    )
    assert failure(missing, "unfreeze") == f"not_found: no memory {MEMORY_ID}"
    assert failure(bad_id, "forget").startswith("invalid_request: path.memory_id: ")


@pytest.mark.parametrize(
    ("headers", "key"),
    [
        ({"X-API-Key": "k1"}, "k1"),
        ({"Authorization": "Bearer k2"}, "k2"),
        ({"authorization": "bearer  k3 "}, "k3"),
        ({"X-API-Key": "k1", "Authorization": "Bearer k2"}, "k1"),
        ({"Authorization": "Basic k2"}, None),
        ({}, None),
    ],
)
def test_the_key_comes_from_either_header(headers, key):
    assert api_key_of(Headers(headers)) == key


def test_mcp_refuses_a_missing_or_wrong_key_with_the_apis_401():
    gateway = RecordingGateway()
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: gateway
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json, text/event-stream"}
    with TestClient(app, raise_server_exceptions=False) as client:
        for headers in ({}, {"Authorization": "Bearer hm_wrong"}):
            answer = client.post("/mcp", json=ping, headers={**accept, **headers})
            assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
        assert client.post("/mcp", json=ping, headers={**accept, "X-API-Key": KEY}).status_code != 401


def test_a_per_user_grant_refuses_another_user_even_past_the_caller():
    gateway = RecordingGateway()
    operations = TenantOperations(gateway, KeyGrant("acme", "alice"))
    with pytest.raises(Forbidden, match="bound to user 'alice' and cannot reach another user"):
        asyncio.run(operations.send(RECALL.call({"query": "q"}, user_id="bob")))
    assert gateway.calls == []
