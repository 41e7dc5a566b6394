"""The MCP door of the Serve app: the tools of ``mcp_door.tools`` over streamable HTTP at ``/mcp``.

A call carries the tenant's key as ``X-API-Key`` or ``Authorization: Bearer <key>``; the endpoint checks it
before the MCP SDK sees the request (a missing or unknown key is the API's own 401), then every tool runs
the replica's gateway with that tenant — the same code path, quotas and errors as the HTTP routes.

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

from actors.app.commands import (
    Confirm,
    Forget,
    ListMemories,
    Profile,
    Recall,
    StartSession,
    Unfreeze,
    UserCommand,
    WriteMemory,
    WriteTurns,
)
from mcp_door.tools import Caller, memory_server
from schemas.api import (
    ConfirmRequest,
    ForgetRequest,
    ForgetResult,
    MemoryList,
    MemoryOut,
    RecallRequest,
    RecallResponse,
    SessionContext,
    StartSessionRequest,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer, State
from schemas.errors import HermesError
from serve.errors import error_body, hermes_error_response
from serve.gateway import Gateway

R = TypeVar("R", bound=BaseModel)
PATH = "/mcp"
_TENANT = "hermes_tenant"  # where the endpoint leaves the authenticated tenant in the request's state
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
    """The user commands with one tenant bound, run by the gateway (``mcp_door.tools.MemoryOperations``)."""

    def __init__(self, gateway: Gateway, tenant_id: str):
        self._gateway = gateway
        self._tenant = tenant_id

    async def _run(self, user_id: str, command: UserCommand[R], idempotency_key: str | None = None) -> R:
        return await self._gateway.run(self._tenant, user_id, command, idempotency_key)

    async def write_turns(
        self, user_id: str, request: WriteTurnsRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult:
        return await self._run(user_id, WriteTurns(request=request), idempotency_key)

    async def write_memory(
        self, user_id: str, request: WriteMemoryRequest | dict, idempotency_key: str | None = None
    ) -> WriteResult:
        return await self._run(user_id, WriteMemory(request=request), idempotency_key)

    async def recall(self, user_id: str, request: RecallRequest | dict) -> RecallResponse:
        return await self._run(user_id, Recall(request=request))

    async def start_session(self, user_id: str, request: StartSessionRequest | dict) -> SessionContext:
        return await self._run(user_id, StartSession(request=request))

    async def list_memories(
        self,
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> MemoryList:
        return await self._run(user_id, ListMemories(layer=layer, state=state, limit=limit, offset=offset))

    async def forget(
        self, user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> ForgetResult:
        return await self._run(user_id, Forget(memory_id=memory_id, request=request or {}))

    async def profile(self, user_id: str) -> UserProfile:
        return await self._run(user_id, Profile())

    async def confirm(
        self, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> MemoryOut:
        return await self._run(user_id, Confirm(memory_id=memory_id, request=request or {}))

    async def unfreeze(self, user_id: str, memory_id: str, request: UnfreezeRequest | dict) -> MemoryOut:
        return await self._run(user_id, Unfreeze(memory_id=memory_id, request=request))


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
            tenant = await self._gateway_of().auth.tenant_for(api_key_of(Headers(scope=scope)))
        except HermesError as refused:
            await hermes_error_response(refused)(scope, receive, send)
            return
        scope.setdefault("state", {})[_TENANT] = tenant
        await self._app(scope, receive, send)

    async def _caller(self, ctx: Context) -> Caller:
        request = ctx.request_context.request
        tenant = getattr(getattr(request, "state", None), _TENANT, None)
        if not isinstance(tenant, str):  # unreachable through __call__, which always sets it
            raise HermesError("the MCP request carries no authenticated tenant")
        return Caller(TenantOperations(self._gateway_of(), tenant))

