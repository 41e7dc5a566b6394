"""The tenant-scoped operations of the service: the one code path behind both front doors.

HTTP routes (``serve.routes``, tenant from the ``X-API-Key`` dependency) and Python deployment-handle
methods (``serve.app.HermesMemory``, tenant from the ``api_key`` argument) both end here. A ``Gateway``
validates identifiers and requests, turns an ``Idempotency-Key`` into the write's ``request_id`` (else a
fresh one), and sends the call to the user's actor through the directory with ``call_user`` (one retry if
that actor was passivated or crashed; the service's request-id record makes the retry safe).

Settings arrive once, at construction; nothing here reads globals or the environment.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, Literal

import ray

from actors.directory import call_user, directory_actor
from actors.errors import InvalidInput
from actors.store.sql import MemoryStore
from actors.store.sql_tenants import TenantLimits
from actors.tracing import span
from schemas.api import (
    AlertList,
    ConfirmRequest,
    CreateTenantRequest,
    DirectoryStats,
    EraseRequest,
    EraseResult,
    ForgetRequest,
    ForgetResult,
    FreezeRequest,
    MemoryDetail,
    MemoryList,
    MemoryOut,
    RecallRequest,
    RecallResponse,
    SessionContext,
    StartSessionRequest,
    TenantCreated,
    UnfreezeRequest,
    UserProfile,
    WriteMemoryRequest,
    WriteResult,
    WriteTurnsRequest,
)
from schemas.enums import AlertStatus, Layer, State
from schemas.ids import check_memory_id, check_user_id
from schemas.settings import HermesSettings
from serve.auth import Authenticator
from serve.quotas import Quotas

MAX_PAGE = 500
AlertFilter = Literal["open", "resolved", "all"]


def request_id_for(idempotency_key: str | None) -> str:
    """The write's request id: the caller's idempotency key (so a resent request is not applied twice),
    or a fresh id (so at least Hermes's own retry after a passivated actor is not)."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    return check_user_id(idempotency_key)  # same safe alphabet and length as user ids


class Gateway:
    def __init__(self, settings: HermesSettings, store: MemoryStore, directory: ray.actor.ActorHandle):
        self.settings = settings
        self.auth = Authenticator(store, settings.admin_key)
        self.quotas = Quotas(store)
        self._store = store
        self._directory = directory

    @classmethod
    def connect(cls, settings: HermesSettings) -> Gateway:
        return cls(settings, MemoryStore.from_settings(settings), directory_actor(settings))

    async def _call(self, tenant_id: str, user_id: str, method: str, *args: Any, **kwargs: Any) -> Any:
        with span(f"hermes.{method}", tenant_id=tenant_id):
            user_id = check_user_id(user_id)
            await self.quotas.admit(tenant_id, user_id, method)
            return await call_user(self._directory, tenant_id, user_id, method, *args, **kwargs)

    # ------------------------------------------------------------------------------------------ writes

    async def write_turns(
        self,
        tenant_id: str,
        user_id: str,
        request: WriteTurnsRequest | dict,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        body = WriteTurnsRequest.model_validate(request)
        request_id = request_id_for(idempotency_key)
        return await self._call(tenant_id, user_id, "write_turns", body, request_id=request_id)

    async def write_memory(
        self,
        tenant_id: str,
        user_id: str,
        request: WriteMemoryRequest | dict,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        body = WriteMemoryRequest.model_validate(request)
        request_id = request_id_for(idempotency_key)
        return await self._call(tenant_id, user_id, "write_memory", body, request_id=request_id)

    # ---------------------------------------------------------------------------- recall and sessions

    async def recall(self, tenant_id: str, user_id: str, request: RecallRequest | dict) -> RecallResponse:
        return await self._call(tenant_id, user_id, "recall", RecallRequest.model_validate(request))

    async def start_session(
        self, tenant_id: str, user_id: str, request: StartSessionRequest | dict
    ) -> SessionContext:
        return await self._call(
            tenant_id, user_id, "start_session", StartSessionRequest.model_validate(request)
        )

    # ----------------------------------------------------------------------- inspection and control

    async def list_memories(
        self,
        tenant_id: str,
        user_id: str,
        layer: Layer | None = None,
        state: State | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> MemoryList:
        if not 1 <= limit <= MAX_PAGE or offset < 0:
            raise InvalidInput(f"limit must be 1..{MAX_PAGE} and offset >= 0")
        return await self._call(
            tenant_id, user_id, "list_items", layer=layer, state=state, limit=limit, offset=offset
        )

    async def get_memory(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryDetail:
        return await self._call(tenant_id, user_id, "get_item", check_memory_id(memory_id))

    async def confirm(
        self, tenant_id: str, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> MemoryOut:
        body = ConfirmRequest.model_validate(request or {})
        return await self._call(tenant_id, user_id, "confirm", check_memory_id(memory_id), body)

    async def freeze(
        self, tenant_id: str, user_id: str, memory_id: str, request: FreezeRequest | dict
    ) -> MemoryOut:
        body = FreezeRequest.model_validate(request)
        return await self._call(tenant_id, user_id, "freeze", check_memory_id(memory_id), body)

    async def unfreeze(
        self, tenant_id: str, user_id: str, memory_id: str, request: UnfreezeRequest | dict
    ) -> MemoryOut:
        body = UnfreezeRequest.model_validate(request)
        return await self._call(tenant_id, user_id, "unfreeze", check_memory_id(memory_id), body)

    async def forget(
        self, tenant_id: str, user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> ForgetResult:
        body = ForgetRequest.model_validate(request or {})
        return await self._call(tenant_id, user_id, "forget", check_memory_id(memory_id), body)

    async def erase_user(
        self, tenant_id: str, user_id: str, request: EraseRequest | dict | None = None
    ) -> EraseResult:
        return await self._call(tenant_id, user_id, "erase_user", EraseRequest.model_validate(request or {}))

    async def alerts(self, tenant_id: str, user_id: str, status: AlertFilter = "open") -> AlertList:
        return await self._call(
            tenant_id, user_id, "alerts", None if status == "all" else AlertStatus(status)
        )

    async def profile(self, tenant_id: str, user_id: str) -> UserProfile:
        return await self._call(tenant_id, user_id, "profile")

    # ----------------------------------------------------------------------------------- operations

    async def create_tenant(
        self, admin_key: str | None, request: CreateTenantRequest | dict
    ) -> TenantCreated:
        self.auth.check_admin(admin_key)
        body = CreateTenantRequest.model_validate(request)
        api_key = await asyncio.to_thread(
            self._store.create_tenant,
            body.tenant_id,
            body.name,
            group_profile_consent=body.group_profile_consent,
            limits=TenantLimits(max_users=body.max_users, requests_per_minute=body.requests_per_minute),
        )
        return TenantCreated(tenant_id=body.tenant_id, api_key=api_key)

    async def stats(self) -> DirectoryStats:
        return await self._directory.stats.remote()
