"""The MCP door against the real stack, driven by the ``mcp`` SDK's own client over both transports:
streamable HTTP at ``/mcp`` (the key as ``Authorization: Bearer`` or ``X-API-Key``) and stdio
(``hermes-memory mcp`` started as a subprocess, a client of the same stack over HTTP).

Each transport remembers and recalls for one user, serves the session snapshot as a tool and as a resource,
runs the audited unfreeze, and answers errors with the HTTP API's own words; no call reaches another user
or another tenant."""

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

TOOLS = {"recall", "remember", "list_memories", "forget", "profile", "start_session", "confirm", "unfreeze"}
MISSING = "m_" + "0" * 32

pytestmark = pytest.mark.slow


def over_http(base: str, key: str, header: str = "bearer") -> Client:
    headers = {"Authorization": f"Bearer {key}"} if header == "bearer" else {"X-API-Key": key}
    return Client(streamable_http_client(f"{base}/mcp", http_client=create_mcp_http_client(headers=headers)))


def over_stdio(base: str, key: str, user: str | None = None) -> Client:
    args = ["-m", "cli.main", "mcp", "--url", base, "--key", key] + (["--user", user] if user else [])
    return Client(StdioServerParameters(command=sys.executable, args=args), read_timeout_seconds=120)


def run(client: Client, script: Callable[[Client], Awaitable[Any]]) -> Any:
    async def session() -> Any:
        async with client:
            return await script(client)

    return asyncio.run(session())


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The words of a failed call, after the SDK's own prefix (an error result the model reads)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    prefix = f"Error executing tool {tool}: "
    assert text.startswith(prefix), text
    return text[len(prefix) :]


def http_error(http: httpx.Client, key: str, method: str, path: str, **kwargs: Any) -> str:
    answer = http.request(method, path, headers={"X-API-Key": key}, **kwargs)
    assert answer.status_code >= 400
    body = answer.json()
    return f"{body['error']}: {body['detail']}"


def say(user_id: str | None, session: str, text: str, n: int) -> dict[str, Any]:
    where = {"user_id": user_id} if user_id else {}
    return {"text": text, "session_id": session, "dialog_id": f"{session}-d{n}", **where}


async def story(client: Client, user: str | None) -> dict[str, Any]:
    """The same conversation over any transport: what the test checks afterwards."""
    seen: dict[str, Any] = {"tools": {tool.name for tool in (await client.list_tools()).tools}}
    for n, session in enumerate(("s1", "s2")):
        await call(client, "remember", **say(user, session, "I'm allergic to peanuts", n))
    conflict = await call(client, "remember", **say(user, "s3", "I think I don't mind peanuts", 0))
    seen["alerts"] = [alert["kind"] for alert in conflict["alerts"]]
    where = {"user_id": user} if user else {}
    hits = (await call(client, "recall", query="what should I avoid cooking?", **where))["hits"]
    seen["top"] = hits[0]["memory"]
    frozen_id = hits[0]["memory"]["memory_id"]
    seen["unfrozen"] = await call(
        client,
        "unfreeze",
        memory_id=frozen_id,
        reason="the user outgrew it",
        dialog_id="s3-d0",
        new_content="I was allergic to peanuts as a child",
        **where,
    )
    structured = await call(
        client,
        "remember",
        text="I prefer tea",
        kind="preference",
        session_id="s3",
        slot="preference.drink",
        **where,
    )
    seen["structured"] = structured["outcomes"][0]
    seen["session"] = await call(client, "start_session", session_id="s4", **where)
    read = await client.read_resource(f"hermes://users/{user}/sessions/s4")
    seen["resource"] = read.contents[0].text  # type: ignore[union-attr]
    seen["profile"] = await call(client, "profile", **where)
    seen["listed"] = await call(client, "list_memories", **where)
    seen["missing"] = await refused(client, "forget", memory_id=MISSING, **where)
    seen["forgot"] = await call(client, "forget", memory_id=seen["structured"]["memory_id"], **where)
    seen["after"] = (await call(client, "list_memories", **where))["total"]
    return seen


def check_story(seen: dict[str, Any], http: httpx.Client, key: str, user: str) -> None:
    assert seen["tools"] == TOOLS
    assert seen["alerts"] == ["frozen_conflict"]
    assert seen["top"]["state"] == "frozen" and "peanut" in seen["top"]["content"]
    assert seen["unfrozen"]["state"] == "frozen"
    assert seen["unfrozen"]["content"] == "I was allergic to peanuts as a child"
    assert seen["structured"]["action"] == "created"
    assert "allergy: Peanut" in seen["session"]["text"] and "I prefer tea" in seen["session"]["text"]
    assert seen["resource"] == seen["session"]["text"]  # the resource is the session's snapshot, unchanged
    assert any(slot["slot"] == "basic.allergy" for slot in seen["profile"]["slots"])
    assert seen["listed"]["total"] == seen["after"] + 1 and seen["forgot"]["forgotten"]
    # the same words as the HTTP API for the same mistake
    assert seen["missing"] == http_error(http, key, "DELETE", f"/v1/users/{user}/memories/{MISSING}")
    assert seen["missing"].startswith("not_found: ")
    # everything landed in this user's memory, as the HTTP API shows it
    listed = http.get(f"/v1/users/{user}/memories", headers={"X-API-Key": key}).json()
    assert listed["total"] == seen["after"]


def test_streamable_http_door(serve_app, tenant_key, http, sql_store):
    seen = run(over_http(serve_app, tenant_key), lambda client: story(client, "ann"))
    check_story(seen, http, tenant_key, "ann")

    async def neighbours(client: Client) -> tuple[Any, ...]:
        other_user = await call(client, "recall", query="peanuts", user_id="bea")
        no_user = await refused(client, "recall", query="peanuts")
        bad_k = await refused(client, "recall", query="peanuts", user_id="ann", k=500)
        bad_id = await refused(client, "forget", memory_id="m_zz", user_id="ann")
        return other_user, no_user, bad_k, bad_id

    other_user, no_user, bad_k, bad_id = run(over_http(serve_app, tenant_key, "x-api-key"), neighbours)
    assert other_user["hits"] == []  # another user of the same tenant sees none of ann's memories
    assert no_user.startswith("invalid_request: user_id is required")
    assert bad_k == http_error(
        http, tenant_key, "POST", "/v1/users/ann/recall", json={"query": "x", "k": 500}
    )
    assert bad_id == http_error(http, tenant_key, "DELETE", "/v1/users/ann/memories/m_zz")

    stranger = sql_store.tenants.create("t_mcp_stranger", "another tenant")
    hits = run(over_http(serve_app, stranger), lambda c: call(c, "recall", query="peanuts", user_id="ann"))
    assert hits["hits"] == []  # the same user id in another tenant is another user

    # no key, or a wrong one: the API's 401 before any MCP message is read
    for headers in ({}, {"Authorization": "Bearer hm_nobody_wrong"}):
        answer = http.post(
            "/mcp",
            headers={**headers, "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        )
        assert answer.status_code == 401
        assert answer.json()["error"] == "unauthorized"


def test_stdio_door(serve_app, tenant_key, http):
    seen = run(over_stdio(serve_app, tenant_key), lambda client: story(client, "cai"))
    check_story(seen, http, tenant_key, "cai")

    async def bound(client: Client) -> tuple[Any, ...]:
        remembered = await call(client, "remember", **say(None, "s1", "I live in Lisbon", 0))
        recalled = await call(client, "recall", query="where do I live?")
        named_self = await call(client, "recall", query="where do I live?", user_id="dan")
        other = await refused(client, "recall", query="anything", user_id="cai")
        with pytest.raises(MCPError) as resource:
            await client.read_resource("hermes://users/cai/sessions/s9")
        return remembered, recalled, named_self, other, resource.value

    remembered, recalled, named_self, other, resource = run(over_stdio(serve_app, tenant_key, "dan"), bound)
    assert remembered["user_id"] == "dan"
    assert "Lisbon" in recalled["hits"][0]["memory"]["content"]
    assert named_self["hits"][0]["memory"]["memory_id"] == recalled["hits"][0]["memory"]["memory_id"]
    assert other == "forbidden: this connection is bound to user 'dan'"
    assert str(resource) == "forbidden: this connection is bound to user 'dan'"

    wrong = run(over_stdio(serve_app, "hm_nobody_wrong"), lambda c: refused(c, "profile", user_id="cai"))
    assert wrong == http_error(http, "hm_nobody_wrong", "GET", "/v1/users/cai/profile")
