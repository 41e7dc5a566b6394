"""The tenant's API keys: mint a key bound to one user (for an end-user-facing agent: it reaches that user
only, whatever user id a call names), list and revoke them, and rotate the tenant's own key with an overlap
in which old and new both work. Tenant-wide, so a per-user key cannot call them."""

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from schemas.api_tenant import (
    MAX_KEY_OVERLAP_SECONDS,
    ApiKeyList,
    ApiKeyMinted,
    ApiKeyOut,
    KeyRotated,
    MintUserKeyRequest,
    RotateKeyRequest,
)
from schemas.ids import KeyId
from serve.routes.deps import GatewayDep, TenantDep

router = APIRouter(prefix="/v1/keys", tags=["keys"])
KeyIdPath = Annotated[KeyId, Path(description="k_ followed by 16 hex digits")]


@router.post("", status_code=status.HTTP_201_CREATED, summary="Mint a key that reaches one user only")
async def mint_user_key(body: MintUserKeyRequest, tenant: TenantDep, gateway: GatewayDep) -> ApiKeyMinted:
    return await gateway.manage_tenant(tenant, lambda admin: admin.mint_user_key(body.user_id, body.label))


@router.get("", summary="The tenant's per-user keys and rotated-out keys still in their overlap")
async def list_keys(tenant: TenantDep, gateway: GatewayDep) -> ApiKeyList:
    return await gateway.manage_tenant(tenant, lambda admin: admin.keys())


@router.delete("/{key_id}", summary="Revoke a key, now or after a grace period")
async def revoke_key(
    key_id: KeyIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    grace_seconds: Annotated[float, Query(ge=0, le=MAX_KEY_OVERLAP_SECONDS)] = 0.0,
) -> ApiKeyOut:
    return await gateway.manage_tenant(tenant, lambda admin: admin.revoke_key(key_id, grace_seconds))


@router.post("/rotate", summary="A new tenant key; the one calling keeps working during the overlap")
async def rotate_key(
    tenant: TenantDep, gateway: GatewayDep, body: RotateKeyRequest | None = None
) -> KeyRotated:
    overlap = (body or RotateKeyRequest()).overlap_seconds
    return await gateway.manage_tenant(tenant, lambda admin: admin.rotate_key(overlap))
