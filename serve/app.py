"""The Ray Serve application: one deployment, ``HermesMemory``, with two front doors onto one code path.

* HTTP: the FastAPI ingress (routers in ``serve.routes``, OpenAPI at ``/docs``), and the Model Context
  Protocol at ``/mcp`` (``serve.mcp``).
* Python: the deployment handle's ``run``, taking the caller's tenant API key and a user command
  (``actors.app.commands``), e.g. ``await handle.run.remote(api_key, "u1", Recall(request={"query": q}))``
  (a write may add an ``idempotency_key``); and ``create_tenant`` with the admin key.

Both go through the replica's ``serve.gateway.Gateway`` → the user's host (``actors.runtime``).

``build_app(settings)`` provisions what the replicas share (SQL schema, the host pool — detached and named
in ``settings.namespace``) and binds the deployment with
the settings, which replicas receive as an argument and never read from the environment. ``app_builder``
is the same for ``serve run serve.app:app_builder`` and Serve config files (``args`` are settings fields);
``serve build serve.app:app`` takes the module attribute ``app``, built on first access.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import ray
from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel
from ray import serve
from ray.serve import Application
from starlette.routing import Route

from actors.app.commands import UserCommand
from schemas.api import CreateTenantRequest, TenantCreated
from schemas.settings import HermesSettings
from serve.errors import BodySizeLimit, install_error_handlers
from serve.gateway import Gateway
from serve.mcp import PATH as MCP_PATH
from serve.mcp import McpEndpoint
from serve.routes import (
    admin,
    alert_review,
    alerts,
    consent,
    console,
    keys,
    memories,
    recall,
    sessions,
    tenant,
    tenant_search,
    transfer,
    users,
)
from serve.routes.deps import current_gateway, replica_gateway
from serve.runtime import reusable_ingress_port
from serve.telemetry import TraceRequests

R = TypeVar("R", bound=BaseModel)
DEPLOYMENT_NAME = "HermesMemory"
#: request bodies above this are refused with 413 before they are parsed
MAX_BODY_BYTES = 1024 * 1024


def create_fastapi_app() -> FastAPI:
    # the MCP endpoint is no route, so it takes the routes' gateway dependency, override included (tests)
    mcp = McpEndpoint(lambda: app.dependency_overrides.get(current_gateway, replica_gateway)())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.running():
            yield

    # the API docs (/docs) load Swagger UI from the package, not a CDN: they work offline (ReDoc is left
    # out: it still fetches its logo from its CDN)
    app = FastAPIOffline(
        redoc_url=None,
        title="Hermes Memory",
        version="0.1.0",
        description="Cross-session memory for AI agents: bounded and frozen gates, USER profiles.",
        lifespan=lifespan,
    )
    app.add_middleware(BodySizeLimit, max_bytes=MAX_BODY_BYTES)
    app.add_middleware(TraceRequests)  # added last: the outermost layer, so the span covers the whole request
    for module in (memories, recall, sessions, alerts, admin):
        app.include_router(module.router)
    app.include_router(users.router)
    app.include_router(tenant.router)
    app.include_router(keys.router)
    app.include_router(transfer.router)
    app.include_router(consent.router)
    app.include_router(alert_review.router)
    app.include_router(tenant_search.router)
    app.include_router(console.router)
    # the Model Context Protocol door (streamable HTTP; serve.mcp): an ASGI app of its own, not a route
    app.router.routes.append(Route(MCP_PATH, mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    install_error_handlers(app)
    return app


fastapi_app = create_fastapi_app()


#: how often Serve's controller checks the replica: how soon a dead one is noticed and replaced (Serve's
#: default, 10 s, was most of the outage after a crash; a check is one small actor call)
HEALTH_CHECK_PERIOD_S = 1.0


@serve.deployment(
    name=DEPLOYMENT_NAME,
    ray_actor_options={"num_cpus": 0},
    max_ongoing_requests=64,
    health_check_period_s=HEALTH_CHECK_PERIOD_S,
)
@serve.ingress(fastapi_app)
class HermesMemory:
    """The handle authenticates the given API key, then runs the same gateway call as the HTTP route."""

    def __init__(self, settings_json: str):
        reusable_ingress_port()  # before Serve binds the port, which it does once this returns
        self.gateway = Gateway.connect(HermesSettings.model_validate_json(settings_json))
        # what the replica built to start (Ray, Serve, FastAPI) lives as long as it does: out of the
        # collector's sight, a full collection no longer walks it (docs/benchmarks.md, tenth round)
        gc.freeze()

    async def _tenant(self, api_key: str, user_id: str) -> str:
        return await self.gateway.auth.tenant_for(api_key, user_id)

    async def run(
        self, api_key: str, user_id: str, command: UserCommand[R], idempotency_key: str | None = None
    ) -> R:
        """Any user command (``actors.app.commands``), as its HTTP route runs it."""
        return await self.gateway.run(await self._tenant(api_key, user_id), user_id, command, idempotency_key)

    async def create_tenant(self, admin_key: str, request: CreateTenantRequest | dict) -> TenantCreated:
        return await self.gateway.create_tenant(admin_key, request)


def provision(settings: HermesSettings) -> None:
    """Create what every replica shares, before any replica starts: the SQL schema (idempotent) and the host
    pool, each host started (its embedding model loaded on first use)."""
    from actors.app.directory import create_schema
    from actors.runtime.pool import pool_actor

    create_schema(settings)
    ray.get(pool_actor(settings).ensure.remote())


def build_app(settings: HermesSettings | None = None) -> Application:
    settings = settings if settings is not None else HermesSettings()
    # `serve build` binds without a cluster: the replicas then find or create the shared actors by name
    if ray.is_initialized():
        provision(settings)
    # @serve.deployment makes the class a Deployment, which mypy does not see
    return HermesMemory.bind(settings.model_dump_json())  # type: ignore[attr-defined]


def app_builder(args: dict[str, Any]) -> Application:
    """``serve run serve.app:app_builder key=value ...``: args override the HERMES_* settings."""
    return build_app(HermesSettings(**args))


def __getattr__(name: str) -> Application:
    # `serve build` and config files can name `serve.app:app`; building it only when asked keeps the
    # import side-effect free in every replica
    if name == "app":
        return app_builder({})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
