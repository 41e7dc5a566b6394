"""One declaration per operation (``schemas.endpoints``): every endpoint of the table is served by a route
with its method, path and summary, is a method of the HTTP client that sends exactly that request, and —
for an operation on one user's memory — has the user command of its name answering its response type. The
MCP tools are the offered endpoints with their path ids and request fields as arguments; and the two doors
that run a call in the service, the HTTP route and the MCP door's ``TenantOperations``, build the same
command, or refuse with the same words, over generated requests."""

import asyncio
import inspect
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from pydantic import ValidationError

from actors.app.commands import COMMANDS, ListMemories, Recall
from actors.core.tenancy import KeyGrant
from mcp_door.tools import OFFERED, memory_server
from schemas.api import MemoryList, RecallResponse
from schemas.endpoints import ENDPOINTS, LIST_MEMORIES, RECALL, Endpoint
from sdk.client import AsyncHermesClient, HermesClient, InvalidRequestError
from serve.app import create_fastapi_app
from serve.errors import error_body
from serve.mcp import TenantOperations
from serve.routes.deps import current_gateway
from tests.unit.app.test_commands import response_type
from tests.unit.serve.test_serve_http import KEY, MEMORY_ID, RecordingGateway

SAMPLE_ARGUMENTS = {"user_id": "u1", "memory_id": MEMORY_ID, "admin_key": "root-key", "request": {}}


def app_with(gateway: RecordingGateway):
    app = create_fastapi_app()
    app.dependency_overrides[current_gateway] = lambda: gateway
    return app


def test_every_endpoint_is_served_as_declared():
    paths = create_fastapi_app().openapi()["paths"]
    for endpoint in ENDPOINTS:
        route = paths[endpoint.path][endpoint.method.lower()]
        assert route["summary"] == endpoint.description
        assert route["operationId"].startswith(f"{endpoint.name.replace('health', 'healthz')}_")


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.name)
def test_every_endpoint_is_the_client_method_sending_its_request(endpoint: Endpoint[Any, Any]):
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(599, json={"error": "recorded", "detail": "the test stops here"})

    with HermesClient("http://hermes", KEY, transport=httpx.MockTransport(answer)) as client:
        method = getattr(client, endpoint.name)
        required = [
            name
            for name, parameter in inspect.signature(method).parameters.items()
            if parameter.default is inspect.Parameter.empty
        ]
        with pytest.raises(Exception, match="recorded"):
            method(*(SAMPLE_ARGUMENTS[name] for name in required))
    ids = {name: SAMPLE_ARGUMENTS[name] for name in endpoint.ids}
    assert seen[0].method == endpoint.method
    assert seen[0].url.path == endpoint.path.format(**ids)
    assert ("Idempotency-Key" in seen[0].headers) == endpoint.keyed


def test_the_command_of_each_user_operation_answers_its_response():
    on_a_user = [endpoint for endpoint in ENDPOINTS if endpoint.path.startswith("/v1/users/{user_id}")]
    assert len(on_a_user) == 14
    for endpoint in on_a_user:
        assert response_type(COMMANDS[endpoint.name]) is endpoint.response, endpoint.name


def test_the_tools_are_the_offered_operations_with_their_ids_and_fields():
    async def tools() -> dict[str, Any]:
        async def caller_of(_):
            raise AssertionError("listing the tools calls nothing")

        async with Client(memory_server(caller_of, error_body)) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    listed = asyncio.run(tools())
    assert set(listed) == {offered.endpoint.name for offered in OFFERED} | {"remember"}
    for offered in OFFERED:
        endpoint, tool = offered.endpoint, listed[offered.endpoint.name]
        fields = {name: f for name, f in endpoint.request.model_fields.items() if name not in offered.omit}
        ids = set(endpoint.ids) - {"user_id"}
        assert tool.description == endpoint.description
        assert set(tool.input_schema["properties"]) == ids | set(fields) | {"user_id"}
        required = ids | {name for name, f in fields.items() if f.is_required()}
        assert set(tool.input_schema.get("required", ())) == required
        assert tool.output_schema["title"] == endpoint.response.__name__


def both_doors(gateway: RecordingGateway, send_over_http, call) -> tuple[Any, Any]:
    """What the HTTP route and the MCP door's ``TenantOperations`` each do with the same request: the command
    they ran, or the words they refused it with."""

    async def over_http() -> Any:
        transport = httpx.ASGITransport(app=app_with(gateway))
        async with AsyncHermesClient("http://hermes", KEY, transport=transport) as client:
            try:
                await send_over_http(client)
            except InvalidRequestError as refused:
                return refused.error, refused.detail
        return gateway.calls.pop()[2]

    async def over_mcp() -> Any:
        try:
            await TenantOperations(gateway, KeyGrant("acme")).send(call)
        except ValidationError as refused:
            body = error_body(refused)
            assert body is not None
            return body.error, body.detail
        return gateway.calls.pop()[2]

    return asyncio.run(over_http()), asyncio.run(over_mcp())


@settings(max_examples=40, deadline=None)
@given(
    limit=st.integers(-3, 600),
    offset=st.integers(-3, 3),
    layer=st.sampled_from([None, "core", "working", "attic"]),
)
def test_a_listing_is_the_same_command_or_the_same_refusal_at_both_doors(limit, offset, layer):
    gateway = RecordingGateway()
    gateway.replies[ListMemories] = MemoryList(items=[], total=0)
    page = {"layer": layer, "limit": limit, "offset": offset}
    http, mcp = both_doors(
        gateway,
        lambda client: client.list_memories("u1", layer=layer, limit=limit, offset=offset),
        LIST_MEMORIES.call({k: v for k, v in page.items() if v is not None}, user_id="u1"),
    )
    assert http == mcp


@settings(max_examples=40, deadline=None)
@given(
    query=st.text(max_size=3),
    k=st.integers(-2, 60),
    session_id=st.sampled_from([None, "s1", "bad id"]),
)
def test_a_recall_is_the_same_command_or_the_same_refusal_at_both_doors(query, k, session_id):
    gateway = RecordingGateway()
    gateway.replies[Recall] = RecallResponse(query=query, hits=[])
    body = {"query": query, "k": k, "session_id": session_id}
    http, mcp = both_doors(gateway, lambda client: client.recall("u1", body), RECALL.call(body, user_id="u1"))
    assert http == mcp
