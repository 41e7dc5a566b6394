"""The tenant's users: search them, and see how full each one's memory tiers are against the tenant's
capacities (from SQL; reading never creates a user)."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from actors.store.sql.tenant_views import UserCounts
from schemas.api_tenant import (
    MAX_USER_QUERY_CHARS,
    MAX_USERS_PAGE,
    USER_QUERY_PATTERN,
    LayerUsage,
    UserList,
    UserSummary,
)
from schemas.enums import Layer
from schemas.settings import Capacities
from serve.routes.deps import UserIdPath
from serve.routes.views import AdmittedTenantDep, StoreDep

router = APIRouter(prefix="/v1/users", tags=["users"])
UserQuery = Annotated[
    str,
    Query(
        max_length=MAX_USER_QUERY_CHARS,
        pattern=USER_QUERY_PATTERN,
        description="part of the user id, case-insensitive; empty lists every user",
    ),
]


def summary_of(counts: UserCounts, capacities: Capacities) -> UserSummary:
    tiers = {
        Layer.WORKING: capacities.working,
        Layer.LONGTERM: capacities.longterm,
        Layer.CORE: capacities.core,
    }
    layers = [
        LayerUsage(layer=layer, used=counts.active.get(layer, 0), capacity=capacity)
        for layer, capacity in tiers.items()
    ]
    layers.append(LayerUsage(layer=Layer.ARCHIVE, used=counts.archived, capacity=None))
    return UserSummary(
        user_id=counts.user_id,
        layers=layers,
        frozen=counts.frozen,
        frozen_limit=capacities.frozen_limit,
        open_alerts=counts.open_alerts,
        last_write_at=counts.last_write_at,
    )


@router.get("", summary="The tenant's users (those holding memories), by user id, with tier usage")
async def list_users(
    tenant: AdmittedTenantDep,
    store: StoreDep,
    query: UserQuery = "",
    limit: Annotated[int, Query(ge=1, le=MAX_USERS_PAGE)] = 50,
) -> UserList:
    found, truncated = await asyncio.to_thread(store.user_counts, tenant, query=query, limit=limit)
    capacities = (await asyncio.to_thread(store.tenant_policy, tenant)).capacities
    return UserList(users=[summary_of(counts, capacities) for counts in found], truncated=truncated)


@router.get("/{user_id}/summary", summary="One user's tier usage against the tenant's capacities")
async def user_summary(user_id: UserIdPath, tenant: AdmittedTenantDep, store: StoreDep) -> UserSummary:
    counts = await asyncio.to_thread(store.counts_of, tenant, user_id)
    capacities = (await asyncio.to_thread(store.tenant_policy, tenant)).capacities
    return summary_of(counts, capacities)
