"""Writing, inspecting and controlling a user's memories; forgetting one memory or the whole user."""

from typing import Annotated

from fastapi import APIRouter, Query

from schemas.api import (
    ConfirmRequest,
    EraseRequest,
    EraseResult,
    ForgetRequest,
    ForgetResult,
    FreezeRequest,
    MemoryDetail,
    MemoryList,
    MemoryOut,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer, State
from serve.gateway import MAX_PAGE
from serve.routes.deps import GatewayDep, IdempotencyKeyDep, MemoryIdPath, TenantDep, UserIdPath

router = APIRouter(prefix="/v1/users/{user_id}", tags=["memories"])
ReasonQuery = Annotated[str, Query(max_length=1000)]


@router.post("/turns", summary="Write conversation turns; only user turns become memories")
async def write_turns(
    user_id: UserIdPath,
    body: WriteTurnsRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKeyDep = None,
) -> WriteResult:
    return await gateway.write_turns(tenant, user_id, body, idempotency_key)


@router.post("/memories", summary="Write one structured memory (it still passes both gates)")
async def write_memory(
    user_id: UserIdPath,
    body: WriteMemoryRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKeyDep = None,
) -> WriteResult:
    return await gateway.write_memory(tenant, user_id, body, idempotency_key)


@router.get("/memories", summary="List memories, optionally by layer and state")
async def list_memories(
    user_id: UserIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    layer: Layer | None = None,
    state: State | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> MemoryList:
    return await gateway.list_memories(tenant, user_id, layer, state, limit, offset)


@router.get("/memories/{memory_id}", summary="One memory with its audit trail")
async def get_memory(
    user_id: UserIdPath, memory_id: MemoryIdPath, tenant: TenantDep, gateway: GatewayDep
) -> MemoryDetail:
    return await gateway.get_memory(tenant, user_id, memory_id)


@router.post("/memories/{memory_id}/confirm", summary="Confirm a memory (counts as a restatement)")
async def confirm(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    body: ConfirmRequest | None = None,
) -> MemoryOut:
    return await gateway.confirm(tenant, user_id, memory_id, body)


@router.post("/memories/{memory_id}/freeze", summary="Freeze a confirmed memory into core")
async def freeze(
    user_id: UserIdPath, memory_id: MemoryIdPath, body: FreezeRequest, tenant: TenantDep, gateway: GatewayDep
) -> MemoryOut:
    return await gateway.freeze(tenant, user_id, memory_id, body)


@router.post(
    "/memories/{memory_id}/unfreeze", summary="Audited change of a frozen memory; it ends frozen again"
)
async def unfreeze(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    body: UnfreezeRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
) -> MemoryOut:
    return await gateway.unfreeze(tenant, user_id, memory_id, body)


@router.delete("/memories/{memory_id}", summary="Forget one memory everywhere, leaving a tombstone")
async def forget(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    reason: ReasonQuery = "user request",
) -> ForgetResult:
    return await gateway.forget(tenant, user_id, memory_id, ForgetRequest(reason=reason))


@router.delete("", summary="Erase the whole user everywhere, leaving a tombstone")
async def erase_user(
    user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep, reason: ReasonQuery = "user request"
) -> EraseResult:
    return await gateway.erase_user(tenant, user_id, EraseRequest(reason=reason))


@router.get("/profile", summary="The USER profile: slot conclusions and the memories behind them")
async def profile(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserProfile:
    return await gateway.profile(tenant, user_id)
