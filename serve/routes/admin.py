"""Operations: liveness, the user hosts' figures, and the operator's control of tenants (admin key):
create one, list them, see and change a tenant's policy (validated: an unknown field or a value out of range
is a 422 naming it), quotas and group-profile consent, and rotate its key with an overlap."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, status

from schemas import endpoints
from schemas.api import CreateTenantRequest, DirectoryStats, TenantCreated
from schemas.api_tenant import (
    GroupProfileConsent,
    KeyRotated,
    RotateKeyRequest,
    TenantLimitsIn,
    TenantList,
    TenantSettings,
)
from schemas.ids import TenantId
from serve.routes.deps import AdminKeyDep, GatewayDep, TenantDep, served

router = APIRouter(tags=["operations"])


@served(router, endpoints.HEALTH)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@served(router, endpoints.STATS)
async def stats(_: TenantDep, gateway: GatewayDep) -> DirectoryStats:
    return await gateway.stats()


@served(router, endpoints.CREATE_TENANT, status_code=status.HTTP_201_CREATED)
async def create_tenant(
    body: CreateTenantRequest, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantCreated:
    return await gateway.create_tenant(admin_key, body)


TenantIdPath = Annotated[TenantId, Path(description="the tenant's id")]
PolicyChanges = Annotated[
    dict[str, Any],
    Body(
        description='any part of the gate policy, nested as in GET (e.g. {"capacities": {"working": 50}})',
        examples=[{"capacities": {"working": 50}, "write_threshold": 0.5, "context_budget_chars": 3000}],
    ),
]


@router.get("/admin/tenants", summary="Every tenant's id")
async def list_tenants(gateway: GatewayDep, admin_key: AdminKeyDep = None) -> TenantList:
    return TenantList(tenants=await gateway.tenant_ids(admin_key))


@router.get("/admin/tenants/{tenant_id}", summary="A tenant's policy, quotas and group-profile consent")
async def tenant_settings(
    tenant_id: TenantIdPath, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantSettings:
    return await gateway.administer(admin_key, tenant_id, lambda admin: admin.settings())


@router.patch(
    "/admin/tenants/{tenant_id}/policy", summary="Change part of a tenant's gate policy (validated)"
)
async def change_policy(
    tenant_id: TenantIdPath, changes: PolicyChanges, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantSettings:
    return await gateway.administer(admin_key, tenant_id, lambda admin: admin.change_policy(changes))


@router.put("/admin/tenants/{tenant_id}/limits", summary="Set a tenant's quotas (null: unlimited)")
async def set_limits(
    tenant_id: TenantIdPath, body: TenantLimitsIn, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantSettings:
    return await gateway.administer(admin_key, tenant_id, lambda admin: admin.set_limits(body))


@router.put(
    "/admin/tenants/{tenant_id}/consent", summary="Whether the tenant's users count in group profiles"
)
async def set_consent(
    tenant_id: TenantIdPath, body: GroupProfileConsent, gateway: GatewayDep, admin_key: AdminKeyDep = None
) -> TenantSettings:
    return await gateway.administer(
        admin_key, tenant_id, lambda admin: admin.set_group_profile_consent(body.group_profiles)
    )


@router.post(
    "/admin/tenants/{tenant_id}/rotate-key", summary="A new key for the tenant, the old one kept a while"
)
async def rotate_tenant_key(
    tenant_id: TenantIdPath,
    gateway: GatewayDep,
    admin_key: AdminKeyDep = None,
    body: RotateKeyRequest | None = None,
) -> KeyRotated:
    overlap = (body or RotateKeyRequest()).overlap_seconds
    return await gateway.administer(admin_key, tenant_id, lambda admin: admin.rotate_key(overlap))
