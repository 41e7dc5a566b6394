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
from schemas import endpoints
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
from serve.routes.deps import GatewayDep, IdempotencyKeyDep, MemoryIdPath, TenantDep, UserIdPath, served

router = APIRouter(tags=["memories"])
ReasonQuery = Annotated[str, Query(max_length=1000)]


@served(router, endpoints.WRITE_TURNS)
async def write_turns(
    user_id: UserIdPath,
    body: WriteTurnsRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKeyDep = None,
) -> WriteResult:
    return await gateway.run(tenant, user_id, WriteTurns(request=body), idempotency_key)


@served(router, endpoints.PREVIEW_TURNS)
async def preview_turns(
    user_id: UserIdPath, body: WriteTurnsRequest, tenant: TenantDep, gateway: GatewayDep
) -> TurnsPreview:
    return await gateway.run(tenant, user_id, PreviewTurns(request=body))


@served(router, endpoints.WRITE_MEMORY)
async def write_memory(
    user_id: UserIdPath,
    body: WriteMemoryRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
    idempotency_key: IdempotencyKeyDep = None,
) -> WriteResult:
    return await gateway.run(tenant, user_id, WriteMemory(request=body), idempotency_key)


@served(router, endpoints.LIST_MEMORIES)
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


@served(router, endpoints.GET_MEMORY)
async def get_memory(
    user_id: UserIdPath, memory_id: MemoryIdPath, tenant: TenantDep, gateway: GatewayDep
) -> MemoryDetail:
    return await gateway.run(tenant, user_id, GetMemory(memory_id=memory_id))


@served(router, endpoints.CONFIRM)
async def confirm(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    body: ConfirmRequest | None = None,
) -> MemoryOut:
    return await gateway.run(tenant, user_id, Confirm(memory_id=memory_id, request=body or ConfirmRequest()))


@served(router, endpoints.FREEZE)
async def freeze(
    user_id: UserIdPath, memory_id: MemoryIdPath, body: FreezeRequest, tenant: TenantDep, gateway: GatewayDep
) -> MemoryOut:
    return await gateway.run(tenant, user_id, Freeze(memory_id=memory_id, request=body))


@served(router, endpoints.UNFREEZE)
async def unfreeze(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    body: UnfreezeRequest,
    tenant: TenantDep,
    gateway: GatewayDep,
) -> MemoryOut:
    return await gateway.run(tenant, user_id, Unfreeze(memory_id=memory_id, request=body))


@served(router, endpoints.FORGET)
async def forget(
    user_id: UserIdPath,
    memory_id: MemoryIdPath,
    tenant: TenantDep,
    gateway: GatewayDep,
    reason: ReasonQuery = "user request",
) -> ForgetResult:
    command = Forget(memory_id=memory_id, request=ForgetRequest(reason=reason))
    return await gateway.run(tenant, user_id, command)


@served(router, endpoints.ERASE_USER)
async def erase_user(
    user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep, reason: ReasonQuery = "user request"
) -> EraseResult:
    return await gateway.run(tenant, user_id, EraseUser(request=EraseRequest(reason=reason)))


@served(router, endpoints.PROFILE)
async def profile(user_id: UserIdPath, tenant: TenantDep, gateway: GatewayDep) -> UserProfile:
    return await gateway.run(tenant, user_id, Profile())
