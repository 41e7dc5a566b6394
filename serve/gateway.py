"""The tenant-scoped door of the service: the one code path behind both front doors.

HTTP routes (``serve.routes``, tenant from the ``X-API-Key`` dependency) and the Python deployment handle
(``serve.app.HermesMemory``, tenant from the ``api_key`` argument) both end here. Every user operation is a
command (``actors.app.commands``) given to ``Gateway.run``, which validates the user id, turns an
``Idempotency-Key`` into a write's ``request_id`` (else a fresh one), admits the command by its effect
(``serve.quotas``) and sends it straight to the user's host (``actors.runtime.pool.HostRouter``: rendezvous
hashing over the host pool; a host that is down is retried, and the service's request-id record makes a
retried write safe). Tenant-wide reads (the users, the policy, the alerts across users, the export) go
through ``read_tenant`` and the tenant's read-only view (``actors.app.tenant_view.TenantView``); changes to
the tenant's own settings (its keys, ...) through ``manage_tenant`` (``actors.app.tenant_admin``).

Settings arrive once, at construction; nothing here reads globals or the environment.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from actors.adapters.tracing import inject_context, span
from actors.app.commands import UserCommand
from actors.app.directory import TenantDirectory
from actors.app.tenant_admin import TenantAdmin
from actors.app.tenant_view import TenantView
from actors.core.tenancy import TenantLimits
from actors.runtime.pool import HostRouter
from schemas.api import ActivationLatency, CreateTenantRequest, DirectoryStats, TenantCreated
from schemas.ids import check_tenant_id, check_user_id
from schemas.settings import HermesSettings
from serve.auth import Authenticator
from serve.quotas import Quotas

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


#: ``gen_ai.provider.name`` of the memory spans
PROVIDER_NAME = "hermes_memory"


def command_span_name(command: UserCommand[R]) -> str:
    """The GenAI memory operation a command is (``search_memory``, ...), else ``hermes.<command>``."""
    return command.operation.value if command.operation is not None else f"hermes.{command.name()}"


def command_span_attributes(tenant_id: str, command: UserCommand[R]) -> dict[str, str]:
    """The span's attributes by OpenTelemetry's ``gen_ai.memory.*`` conventions, and the command's name.
    The store is the tenant's memory; neither the user id nor any content (the query, the records) is
    recorded."""
    attributes = {"tenant_id": tenant_id, "hermes.command": command.name()}
    if command.operation is not None:
        attributes |= {
            "gen_ai.operation.name": command.operation.value,
            "gen_ai.provider.name": PROVIDER_NAME,
            "gen_ai.memory.store.id": tenant_id,
        }
        record_id = command.record_id()
        if record_id is not None:
            attributes["gen_ai.memory.record.id"] = record_id
    return attributes


def request_id_for(idempotency_key: str | None) -> str:
    """The write's request id: the caller's idempotency key (so a resent request is not applied twice),
    or a fresh id (so at least Hermes's own retry after a passivated actor is not)."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    return check_user_id(idempotency_key)  # same safe alphabet and length as user ids


class Gateway:
    def __init__(self, settings: HermesSettings, directory: TenantDirectory, hosts: HostRouter):
        self.settings = settings
        self.auth = Authenticator(directory, settings.admin_key)
        self.quotas = Quotas(directory)
        self._directory = directory
        self.hosts = hosts

    @classmethod
    def connect(cls, settings: HermesSettings) -> Gateway:
        return cls(settings, TenantDirectory.connect(settings), HostRouter(settings))

    async def run(
        self, tenant_id: str, user_id: str, command: UserCommand[R], idempotency_key: str | None = None
    ) -> R:
        """``command`` for the tenant's user, run by the user's host: the quotas admit it by its effect, a
        write carries its request id (from ``idempotency_key``, else fresh), and the caller's trace context
        travels with it."""
        with span(command_span_name(command), **command_span_attributes(tenant_id, command)) as current:
            user_id = check_user_id(user_id)
            command = command.with_request_id(request_id_for(idempotency_key))
            await self.quotas.admit(tenant_id, user_id, command.effect)
            result = await self.hosts.run(tenant_id, user_id, command, inject_context())
            count = command.record_count(result)
            if count is not None:
                current.set_attribute("gen_ai.memory.record.count", count)
            return result

    async def read_tenant(self, tenant_id: str, read: Callable[[TenantView], T]) -> T:
        """A tenant-wide read (no user's command): one request token, then ``read`` on the tenant's
        read-only view, e.g. ``lambda view: view.users(query)``."""
        await self.quotas.admit_tenant_view(tenant_id)
        return await asyncio.to_thread(read, self._directory.view(tenant_id))

    async def manage_tenant(self, tenant_id: str, act: Callable[[TenantAdmin], T]) -> T:
        """A change to the caller's own tenant (its keys, ...): one request token, then ``act`` on the
        tenant's settings, e.g. ``lambda admin: admin.keys()``."""
        await self.quotas.admit_tenant_view(tenant_id)
        return await asyncio.to_thread(act, self._directory.admin(tenant_id))

    async def administer(self, admin_key: str | None, tenant_id: str, act: Callable[[TenantAdmin], T]) -> T:
        """An operator's change to any tenant (admin key): ``act`` on that tenant's settings."""
        self.auth.check_admin(admin_key)
        check_tenant_id(tenant_id)
        return await asyncio.to_thread(act, self._directory.admin(tenant_id))

    async def tenant_ids(self, admin_key: str | None) -> list[str]:
        self.auth.check_admin(admin_key)
        return await asyncio.to_thread(self._directory.tenant_ids)

    # ----------------------------------------------------------------------------------- operations

    async def create_tenant(
        self, admin_key: str | None, request: CreateTenantRequest | dict
    ) -> TenantCreated:
        self.auth.check_admin(admin_key)
        body = CreateTenantRequest.model_validate(request)
        api_key = await asyncio.to_thread(
            self._directory.create_tenant,
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
            prepared_recalls=sum(h.prepared_recalls for h in hosts),
        )


def _percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))]
