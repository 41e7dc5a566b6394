"""The tenant's API keys: mint a key bound to one user (for an end-user-facing agent: it reaches that user
only, whatever user id a call names), list and revoke them, and rotate the tenant's own key with an overlap
in which old and new both work. Tenant-wide, so a per-user key cannot call them."""

import asyncio
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from actors.core.memory import utcnow
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
from serve.routes.views import AdmittedTenantDep, StoreDep

router = APIRouter(prefix="/v1/keys", tags=["keys"])
KeyIdPath = Annotated[KeyId, Path(description="k_ followed by 16 hex digits")]


@router.post("", status_code=status.HTTP_201_CREATED, summary="Mint a key that reaches one user only")
async def mint_user_key(body: MintUserKeyRequest, tenant: AdmittedTenantDep, store: StoreDep) -> ApiKeyMinted:
    info, api_key = await asyncio.to_thread(store.mint_user_key, tenant, body.user_id, body.label)
    return ApiKeyMinted(**ApiKeyOut.model_validate(info).model_dump(), api_key=api_key)


@router.get("", summary="The tenant's per-user keys and rotated-out keys still in their overlap")
async def list_keys(tenant: AdmittedTenantDep, store: StoreDep) -> ApiKeyList:
    found = await asyncio.to_thread(store.api_keys, tenant)
    return ApiKeyList(keys=[ApiKeyOut.model_validate(info) for info in found])


@router.delete("/{key_id}", summary="Revoke a key, now or after a grace period")
async def revoke_key(
    key_id: KeyIdPath,
    tenant: AdmittedTenantDep,
    store: StoreDep,
    grace_seconds: Annotated[float, Query(ge=0, le=MAX_KEY_OVERLAP_SECONDS)] = 0.0,
) -> ApiKeyOut:
    return ApiKeyOut.model_validate(await asyncio.to_thread(store.revoke_key, tenant, key_id, grace_seconds))


@router.post("/rotate", summary="A new tenant key; the one calling keeps working during the overlap")
async def rotate_key(
    tenant: AdmittedTenantDep, store: StoreDep, body: RotateKeyRequest | None = None
) -> KeyRotated:
    overlap = (body or RotateKeyRequest()).overlap_seconds
    api_key = await asyncio.to_thread(store.rotate_key, tenant, overlap)
    return KeyRotated(
        tenant_id=tenant, api_key=api_key, previous_key_expires_at=utcnow() + timedelta(seconds=overlap)
    )
