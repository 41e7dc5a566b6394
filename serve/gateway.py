"""The tenant-scoped operations of the service: the one code path behind both front doors.

HTTP routes (``serve.routes``, tenant from the ``X-API-Key`` dependency) and Python deployment-handle
methods (``serve.app.HermesMemory``, tenant from the ``api_key`` argument) both end here. A ``Gateway``
validates identifiers and requests, turns an ``Idempotency-Key`` into the write's ``request_id`` (else a
fresh one), and sends the call straight to the user's host (``actors.runtime.pool.HostRouter``: rendezvous
hashing over the host pool; a host that is down is retried, and the service's request-id record makes a
retried write safe). Each user operation (``actors.app.operations.UserOperations``) is a method here of
the same name, calling the host's method of that name; the caller's trace context travels with it.

Settings arrive once, at construction; nothing here reads globals or the environment.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Literal, TypeVar

from actors.adapters.tracing import inject_context, span
from actors.app.operations import Operation, UserOperations
from actors.runtime.pool import Handle, HostRouter
from actors.store.sql.store import MemoryStore
from actors.store.sql.tenants import TenantLimits
from schemas.api import (
    ActivationLatency,
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
from schemas.errors import InvalidInput
from schemas.ids import check_memory_id, check_user_id
from schemas.settings import HermesSettings
from serve.auth import Authenticator
from serve.quotas import Quotas

T = TypeVar("T")
#: a host call given the user's host and the caller's trace context
HostCall = Callable[[Handle, dict[str, str]], Awaitable[T]]

MAX_PAGE = 500
AlertFilter = Literal["open", "resolved", "all"]


def request_id_for(idempotency_key: str | None) -> str:
    """The write's request id: the caller's idempotency key (so a resent request is not applied twice),
    or a fresh id (so at least Hermes's own retry after a passivated actor is not)."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    return check_user_id(idempotency_key)  # same safe alphabet and length as user ids


class Gateway:
    def __init__(self, settings: HermesSettings, store: MemoryStore, hosts: HostRouter):
        self.settings = settings
        self.auth = Authenticator(store, settings.admin_key)
        self.quotas = Quotas(store)
        self._store = store
        self.hosts = hosts

    @classmethod
    def connect(cls, settings: HermesSettings) -> Gateway:
        return cls(settings, MemoryStore.from_settings(settings), HostRouter(settings))

    async def _call(self, operation: Operation, tenant_id: str, user_id: str, send: HostCall[T]) -> T:
        """``send`` calls the host's method of ``operation`` (a ``UserOperations`` member), which also names
        the call's span and, by its declared effect, what the quotas check."""
        with span(f"hermes.{operation.__name__}", tenant_id=tenant_id):
            user_id = check_user_id(user_id)
            await self.quotas.admit(tenant_id, user_id, operation)
            trace_context = inject_context()
            return await self.hosts.call(tenant_id, user_id, lambda host: send(host, trace_context))

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
        return await self._call(
            UserOperations.write_turns,
            tenant_id,
            user_id,
            lambda host, tc: host.write_turns.remote(tenant_id, user_id, body, request_id, tc),
        )

    async def write_memory(
        self,
        tenant_id: str,
        user_id: str,
        request: WriteMemoryRequest | dict,
        idempotency_key: str | None = None,
    ) -> WriteResult:
        body = WriteMemoryRequest.model_validate(request)
        request_id = request_id_for(idempotency_key)
        return await self._call(
            UserOperations.write_memory,
            tenant_id,
            user_id,
            lambda host, tc: host.write_memory.remote(tenant_id, user_id, body, request_id, tc),
        )

    # ---------------------------------------------------------------------------- recall and sessions

    async def recall(self, tenant_id: str, user_id: str, request: RecallRequest | dict) -> RecallResponse:
        body = RecallRequest.model_validate(request)
        return await self._call(
            UserOperations.recall,
            tenant_id,
            user_id,
            lambda host, tc: host.recall.remote(tenant_id, user_id, body, tc),
        )

    async def start_session(
        self, tenant_id: str, user_id: str, request: StartSessionRequest | dict
    ) -> SessionContext:
        body = StartSessionRequest.model_validate(request)
        return await self._call(
            UserOperations.start_session,
            tenant_id,
            user_id,
            lambda host, tc: host.start_session.remote(tenant_id, user_id, body, tc),
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
            UserOperations.list_memories,
            tenant_id,
            user_id,
            lambda host, tc: host.list_memories.remote(tenant_id, user_id, layer, state, limit, offset, tc),
        )

    async def get_memory(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryDetail:
        memory_id = check_memory_id(memory_id)
        return await self._call(
            UserOperations.get_memory,
            tenant_id,
            user_id,
            lambda host, tc: host.get_memory.remote(tenant_id, user_id, memory_id, tc),
        )

    async def confirm(
        self, tenant_id: str, user_id: str, memory_id: str, request: ConfirmRequest | dict | None = None
    ) -> MemoryOut:
        body = ConfirmRequest.model_validate(request or {})
        memory_id = check_memory_id(memory_id)
        return await self._call(
            UserOperations.confirm,
            tenant_id,
            user_id,
            lambda host, tc: host.confirm.remote(tenant_id, user_id, memory_id, body, tc),
        )

    async def freeze(
        self, tenant_id: str, user_id: str, memory_id: str, request: FreezeRequest | dict
    ) -> MemoryOut:
        body = FreezeRequest.model_validate(request)
        memory_id = check_memory_id(memory_id)
        return await self._call(
            UserOperations.freeze,
            tenant_id,
            user_id,
            lambda host, tc: host.freeze.remote(tenant_id, user_id, memory_id, body, tc),
        )

    async def unfreeze(
        self, tenant_id: str, user_id: str, memory_id: str, request: UnfreezeRequest | dict
    ) -> MemoryOut:
        body = UnfreezeRequest.model_validate(request)
        memory_id = check_memory_id(memory_id)
        return await self._call(
            UserOperations.unfreeze,
            tenant_id,
            user_id,
            lambda host, tc: host.unfreeze.remote(tenant_id, user_id, memory_id, body, tc),
        )

    async def forget(
        self, tenant_id: str, user_id: str, memory_id: str, request: ForgetRequest | dict | None = None
    ) -> ForgetResult:
        body = ForgetRequest.model_validate(request or {})
        memory_id = check_memory_id(memory_id)
        return await self._call(
            UserOperations.forget,
            tenant_id,
            user_id,
            lambda host, tc: host.forget.remote(tenant_id, user_id, memory_id, body, tc),
        )

    async def erase_user(
        self, tenant_id: str, user_id: str, request: EraseRequest | dict | None = None
    ) -> EraseResult:
        body = EraseRequest.model_validate(request or {})
        return await self._call(
            UserOperations.erase_user,
            tenant_id,
            user_id,
            lambda host, tc: host.erase_user.remote(tenant_id, user_id, body, tc),
        )

    async def alerts(self, tenant_id: str, user_id: str, status: AlertFilter = "open") -> AlertList:
        wanted = None if status == "all" else AlertStatus(status)
        return await self._call(
            UserOperations.alerts,
            tenant_id,
            user_id,
            lambda host, tc: host.alerts.remote(tenant_id, user_id, wanted, tc),
        )

    async def profile(self, tenant_id: str, user_id: str) -> UserProfile:
        return await self._call(
            UserOperations.profile,
            tenant_id,
            user_id,
            lambda host, tc: host.profile.remote(tenant_id, user_id, tc),
        )

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
        """The host pool's figures, summed over its hosts."""
        hosts = await self.hosts.pool.stats.remote()
        latencies = sorted(seconds for host in hosts for seconds in host.activation_seconds)
        return DirectoryStats(
            live=sum(h.live for h in hosts),
            max_live=sum(h.max_live for h in hosts),
            activations=sum(h.activations for h in hosts),
            passivations=sum(h.passivations for h in hosts),
            idle_passivations=sum(h.idle_passivations for h in hosts),
            hosts=len(hosts),
            activation_latency=ActivationLatency(
                samples=len(latencies),
                p50_ms=round(_percentile(latencies, 0.50) * 1000, 2) if latencies else None,
                p95_ms=round(_percentile(latencies, 0.95) * 1000, 2) if latencies else None,
            ),
        )


def _percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))]
