"""Writing, inspecting and controlling a user's memories; forgetting one memory or the whole user. Each
route builds the user command (``actors.app.commands``) and runs it through the gateway."""

from typing import Annotated

from fastapi import APIRouter, Query

from actors.app.commands import (
    Confirm,
    EraseUser,
    Forget,
    Freeze,
    GetMemory,
    ListMemories,
    PreviewTurns,
    Profile,
    Unfreeze,
    WriteMemory,
    WriteTurns,
)
from schemas.api import (
    MAX_PAGE,
    ConfirmRequest,
    EraseRequest,
    EraseResult,
    ForgetRequest,
    ForgetResult,
    FreezeRequest,
    MemoryDetail,
    MemoryList,
    MemoryOut,
    TurnsPreview,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import Layer, State
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
    return await gateway.run(tenant, user_id, WriteTurns(request=body), idempotency_key)


@router.post(
    "/turns:preview",
    summary="What writing these turns would store (the gates' decisions), without storing anything",
)
async def preview_turns(
    user_id: UserIdPath, body: WriteTurnsRequest, tenant: TenantDep, gateway: GatewayDep
) -> TurnsPreview:
    return await gateway.run(tenant, user_id, PreviewTurns(request=body))


@router.post("/memories", summary="Write one structured memory (it still passes both gates)")
async def write_memory(
    user_id: UserIdPath,
    body: WriteMemoryRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKeyDep = None,
) -> WriteResult:
    return await gateway.run(tenant, user_id, WriteMemory(request=body), idempotency_key)


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
    command = ListMemories(layer=layer, state=state, limit=limit, offset=offset)
    return await gateway.run(tenant, user_id, command)


@router.get("/memories/{memory_id}", summary="One memory with its audit trail")
async def get_memory(
    user_id: UserIdPath, memory_id: MemoryIdPath, tenant: TenantDep, gateway: GatewayDep
) -> MemoryDetail:
    return await gateway.run(tenant, user_id, GetMemory(memory_id=memory_id))


@router.post("/memories/{memory_id}/confirm", summary="Confirm a memory (counts as a restatement)")
async def confirm(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    body: ConfirmRequest | None = None,
) -> MemoryOut:
    return await gateway.run(tenant, user_id, Confirm(memory_id=memory_id, request=body or ConfirmRequest()))


@router.post("/memories/{memory_id}/freeze", summary="Freeze a confirmed memory into core")
async def freeze(
    user_id: UserIdPath, memory_id: MemoryIdPath, body: FreezeRequest, tenant: TenantDep, gateway: GatewayDep
) -> MemoryOut:
    return await gateway.run(tenant, user_id, Freeze(memory_id=memory_id, request=body))


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
    return await gateway.run(tenant, user_id, Unfreeze(memory_id=memory_id, request=body))


@router.delete("/memories/{memory_id}", summary="Forget one memory everywhere, leaving a tombstone")
async def forget(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    reason: ReasonQuery = "user request",
) -> ForgetResult:
    command = Forget(memory_id=memory_id, request=ForgetRequest(reason=reason))
    return await gateway.run(tenant, user_id, command)


@router.delete("", summary="Erase the whole user everywhere, leaving a tombstone")
async def erase_user(
    user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep, reason: ReasonQuery = "user request"
) -> EraseResult:
    return await gateway.run(tenant, user_id, EraseUser(request=EraseRequest(reason=reason)))


@router.get("/profile", summary="The USER profile: slot conclusions and the memories behind them")
async def profile(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserProfile:
    return await gateway.run(tenant, user_id, Profile())
