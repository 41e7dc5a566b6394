"""The MCP door of the Serve app: the tools of ``mcp_door.tools`` over streamable HTTP at ``/mcp``.

A call carries the tenant's key as ``X-API-Key`` or ``Authorization: Bearer <key>``; the endpoint checks it
before the MCP SDK sees the request (a missing or unknown key is the API's own 401), then every tool runs
the replica's gateway with that tenant — the same code path, quotas and errors as the HTTP routes. A
per-user key binds the connection to its user: a tool naming another user is refused (``Caller`` and,
again, ``check_reach`` before every command).

The transport is stateless and answers JSON: each POST stands alone, so any replica behind Serve's proxy
can take any request and nothing is kept between them. DNS-rebinding protection (a browser-only attack on
servers that trust the network) is off: every request must carry the key, which a rebinding page never has.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from actors.app.commands import command_for
from actors.core.tenancy import KeyGrant
from mcp_door.tools import Caller, memory_server
from schemas.endpoints import Call
from schemas.errors import HermesError, InvalidInput
from serve.auth import check_reach
from serve.errors import error_body, hermes_error_response
from serve.gateway import Gateway

R = TypeVar("R", bound=BaseModel)
PATH = "/mcp"
_GRANT = "hermes_grant"  # where the endpoint leaves what the key reaches in the request's state
_BEARER = "bearer "


def api_key_of(headers: Headers) -> str | None:
    """``X-API-Key``, else the token of ``Authorization: Bearer`` (what MCP clients send)."""
    key = headers.get("x-api-key")
    if key:
        return key
    authorization = headers.get("authorization", "")
    if authorization.lower().startswith(_BEARER):
        return authorization[len(_BEARER) :].strip()
    return None


class TenantOperations:
    """The calls of the MCP tools with one key's grant bound (its tenant, and its user for a per-user key):
    each runs the user command of its operation (``command_for``) through the gateway, as the operation's
    route does (``mcp_door.tools.MemoryOperations``); a per-user key's calls reach its user only."""

    def __init__(self, gateway: Gateway, grant: KeyGrant):
        self._gateway = gateway
        self._grant = grant

    async def send(self, call: Call[R]) -> R:
        user_id = call.user_id
        if user_id is None:  # the tools offer only operations on one user's memory
            raise InvalidInput(f"{call.endpoint.name} is not an operation on one user's memory")
        check_reach(self._grant, user_id)
        command = command_for(call)
        return await self._gateway.run(self._grant.tenant_id, user_id, command, call.idempotency_key)


class McpEndpoint:
    """The ASGI app routed at ``/mcp``. ``running()`` (the FastAPI app's lifespan) builds the MCP server and
    starts the SDK's session manager, once per lifespan: the app object is pickled to the replicas before
    that, and the server holds what cannot be pickled (its request-state cipher)."""

    def __init__(self, gateway_of: Callable[[], Gateway]):
        self._gateway_of = gateway_of
        self._app: Starlette | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        app = memory_server(self._caller, error_body).streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with app.router.lifespan_context(app):
            self._app = app
            try:
                yield
            finally:
                self._app = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            raise RuntimeError("the MCP endpoint is served only inside the app's lifespan")
        try:
            grant = await self._gateway_of().auth.grant_for(api_key_of(Headers(scope=scope)))
        except HermesError as refused:
            await hermes_error_response(refused)(scope, receive, send)
            return
        scope.setdefault("state", {})[_GRANT] = grant
        await self._app(scope, receive, send)

    async def _caller(self, ctx: Context) -> Caller:
        request = ctx.request_context.request
        grant = getattr(getattr(request, "state", None), _GRANT, None)
        if not isinstance(grant, KeyGrant):  # unreachable through __call__, which always sets it
            raise HermesError("the MCP request carries no authenticated tenant")
        return Caller(TenantOperations(self._gateway_of(), grant), bound_user=grant.user_id)
