"""The tenant's users: search them, and see how full each one's memory tiers are against the tenant's
capacities (the tenant's read-only view, ``actors.app.tenant_view``; reading never creates a user)."""

from typing import Annotated

from fastapi import APIRouter, Query

from schemas.api_tenant import (
    MAX_USER_QUERY_CHARS,
    MAX_USERS_PAGE,
    USER_QUERY_PATTERN,
    UserList,
    UserQuality,
    UserSummary,
)
from serve.routes.deps import GatewayDep, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users", tags=["users"])
UserQuery = Annotated[
    str,
    Query(
        max_length=MAX_USER_QUERY_CHARS,
        pattern=USER_QUERY_PATTERN,
        description="part of the user id, case-insensitive; empty lists every user",
    ),
]


@router.get("", summary="The tenant's users (those holding memories), by user id, with tier usage")
async def list_users(
    tenant: TenantDep,
    gateway: GatewayDep,
    query: UserQuery = "",
    limit: Annotated[int, Query(ge=1, le=MAX_USERS_PAGE)] = 50,
) -> UserList:
    return await gateway.read_tenant(tenant, lambda view: view.users(query, limit))


@router.get("/{user_id}/summary", summary="One user's tier usage against the tenant's capacities")
async def user_summary(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserSummary:
    return await gateway.read_tenant(tenant, lambda view: view.user_summary(user_id))


@router.get(
    "/{user_id}/quality",
    summary="One user's quality figures from the last consolidation run: profile drift and agreement, "
    "eviction hit rate (figures null before a run covered the user)",
)
async def user_quality(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserQuality:
    return await gateway.read_tenant(tenant, lambda view: view.user_quality(user_id))
