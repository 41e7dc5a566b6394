"""``served(router, endpoint)``, the decorator of an operation's route; and the dependencies every route
takes, as ``Annotated`` aliases: the replica's gateway, the caller's tenant (from ``X-API-Key``), the admin
key, validated path ids, and the optional ``Idempotency-Key``.

The tenant dependency is where a per-user key meets HTTP: it reads the ``{user_id}`` the path names (None on
a tenant-wide route) and lets the key through only for its own user."""

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Header, Path, Request

from schemas.endpoints import Endpoint
from schemas.ids import USER_ID_PATTERN, MemoryId, UserId
from serve.gateway import Gateway

F = TypeVar("F", bound=Callable[..., Any])


def served(router: APIRouter, endpoint: Endpoint[Any, Any], **options: Any) -> Callable[[F], F]:
    """The route of an operation of ``schemas.endpoints``: its method, path and summary as declared there
    (the client and the MCP tools read the same declaration)."""
    return router.api_route(endpoint.path, methods=[endpoint.method], summary=endpoint.description, **options)


def replica_gateway() -> Gateway:
    """The gateway of the Serve replica this code runs in."""
    from ray import serve

    app: Any = serve.get_replica_context().servable_object  # the HermesMemory deployment
    gateway: Gateway = app.gateway
    return gateway


async def current_gateway() -> Gateway:
    """The routes' gateway (replaced in tests without Serve). A coroutine because FastAPI runs a plain
    function dependency in a worker thread: one thread hand-off each way on every request."""
    return replica_gateway()


GatewayDep = Annotated[Gateway, Depends(current_gateway)]


async def tenant_from_api_key(
    request: Request, gateway: GatewayDep, api_key: Annotated[str | None, Header(alias="X-API-Key")] = None
) -> str:
    return await gateway.auth.tenant_for(api_key, request.path_params.get("user_id"))


TenantDep = Annotated[str, Depends(tenant_from_api_key)]
AdminKeyDep = Annotated[str | None, Header(alias="X-Admin-Key")]
UserIdPath = Annotated[UserId, Path(description="the user, unique within the caller's tenant")]
MemoryIdPath = Annotated[MemoryId, Path(description="m_ followed by 32 hex digits")]
IdempotencyKeyDep = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=USER_ID_PATTERN,
        description="a write resent with the same key returns the first result, it is not applied twice",
    ),
]
