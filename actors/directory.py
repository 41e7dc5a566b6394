"""The actor directory: finds or activates the actor of a (tenant, user), and passivates actors so that at
most ``settings.max_live_actors`` are alive (least recently used first) and none stays idle longer than
``settings.actor_idle_seconds``.

One named async actor per cluster (``directory`` in ``settings.namespace``). User actors are named
``user:<tenant>:<user>`` in the same namespace and created with ``get_if_exists=True``; on top of that the
directory shares one activation task per user, and an activation first waits for that user's previous
incarnation to finish passivating, so two live actors never exist for one user.

The race "the directory passivates an actor while a replica is calling it" is settled by ordering: a user
actor is synchronous, so ``passivate`` runs after every call queued before it; calls queued after it fail
with ``ActorDiedError``. ``call_user`` retries such a call once through the directory, reporting the dead
incarnation so the directory activates a fresh one. Writes carry a ``request_id`` that the service records
in SQL, so a retried write is never applied twice.

Errors: an actor whose construction fails (SQL down, bad settings) becomes ``StoreUnavailable``; a
``HermesError`` raised by the service reaches the caller as itself, unwrapped from Ray's task error.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from actors.errors import HermesError, StoreUnavailable
from actors.tracing import inject_context
from actors.user_actor import ServiceFactory, UserActor
from schemas.api import ActivationLatency, DirectoryStats
from schemas.settings import HermesSettings

log = logging.getLogger(__name__)

DIRECTORY_NAME = "directory"
#: activation latencies kept for the p50/p95 figures
LATENCY_WINDOW = 256
#: how long a passivation may wait for the calls queued before it
PASSIVATE_TIMEOUT_SECONDS = 120.0
#: attempts to take over a user actor's name while its passivated predecessor is still being reaped
SPAWN_ATTEMPTS = 20

UserKey = tuple[str, str]


def user_actor_name(tenant_id: str, user_id: str) -> str:
    return f"user:{tenant_id}:{user_id}"


@dataclass(slots=True)
class _Entry:
    handle: ray.actor.ActorHandle
    #: distinguishes successive actors of one user, so a report of a dead one cannot evict its successor
    incarnation: int
    last_used: float


def _percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))
    return sorted_values[index]


@ray.remote(num_cpus=0)
class ActorDirectory:
    def __init__(self, settings_json: str, service_factory: ServiceFactory | None = None):
        settings = HermesSettings.model_validate_json(settings_json)
        self._settings_json = settings_json
        self._namespace = settings.namespace
        self._max_live = settings.max_live_actors
        self._idle_seconds = settings.actor_idle_seconds
        self._service_factory = service_factory
        self._live: OrderedDict[UserKey, _Entry] = OrderedDict()  # least recently used first
        self._activating: dict[UserKey, asyncio.Task[_Entry]] = {}
        self._passivating: dict[UserKey, asyncio.Task[None]] = {}
        self._incarnations = itertools.count(1)
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._activations = 0
        self._passivations = 0
        self._idle_passivations = 0
        self._sweeper: asyncio.Task[None] | None = None

    async def get(
        self, tenant_id: str, user_id: str, dead_incarnation: int | None = None
    ) -> tuple[ray.actor.ActorHandle, int]:
        """The live actor of this user, activated if needed; ``dead_incarnation`` reports one that died."""
        self._ensure_sweeper()
        key = (tenant_id, user_id)
        entry = self._live.get(key)
        if entry is not None and entry.incarnation == dead_incarnation:
            del self._live[key]
            _release_name(entry.handle)
            entry = None
        if entry is None:
            entry = await asyncio.shield(self._activation(key))
            self._live.setdefault(key, entry)
        entry.last_used = time.monotonic()
        if key in self._live:
            self._live.move_to_end(key)
        self._passivate_over_capacity()
        return entry.handle, entry.incarnation

    async def sweep(self) -> int:
        """Passivate every actor idle longer than the configured time; returns how many."""
        cutoff = time.monotonic() - self._idle_seconds
        idle = [(key, entry) for key, entry in self._live.items() if entry.last_used < cutoff]
        for key, entry in idle:
            self._passivate(key, entry)
        self._idle_passivations += len(idle)
        return len(idle)

    async def passivate_all(self) -> int:
        """Passivate every live actor and wait until they are gone (graceful shutdown)."""
        count = len(self._live)
        for key, entry in list(self._live.items()):
            self._passivate(key, entry)
        await asyncio.gather(*self._passivating.values())
        return count

    async def stats(self) -> DirectoryStats:
        ordered = sorted(self._latencies)
        return DirectoryStats(
            live=len(self._live),
            max_live=self._max_live,
            activations=self._activations,
            passivations=self._passivations,
            idle_passivations=self._idle_passivations,
            activation_latency=ActivationLatency(
                samples=len(ordered),
                p50_ms=round(_percentile(ordered, 0.50) * 1000, 2) if ordered else None,
                p95_ms=round(_percentile(ordered, 0.95) * 1000, 2) if ordered else None,
            ),
        )

    # ------------------------------------------------------------------------------------ activation

    def _activation(self, key: UserKey) -> asyncio.Task[_Entry]:
        """One shared activation per user: concurrent first calls wait for the same actor."""
        task = self._activating.get(key)
        if task is None:
            task = asyncio.create_task(self._activate(key))
            self._activating[key] = task
            task.add_done_callback(lambda _: self._activating.pop(key, None))
        return task

    async def _activate(self, key: UserKey) -> _Entry:
        predecessor = self._passivating.get(key)
        if predecessor is not None:
            await predecessor
        started = time.perf_counter()
        handle = await self._spawn(key)
        self._latencies.append(time.perf_counter() - started)
        self._activations += 1
        return _Entry(handle=handle, incarnation=next(self._incarnations), last_used=time.monotonic())

    async def _spawn(self, key: UserKey) -> ray.actor.ActorHandle:
        tenant_id, user_id = key
        for attempt in range(SPAWN_ATTEMPTS):
            handle = UserActor.options(
                name=user_actor_name(tenant_id, user_id), namespace=self._namespace, get_if_exists=True
            ).remote(tenant_id, user_id, self._settings_json, self._service_factory)
            try:
                await handle.ping.remote()
                return handle
            except ActorDiedError as exc:
                _release_name(handle)  # a failed start, or a dead predecessor still holding the name
                if exc.actor_init_failed:
                    raise StoreUnavailable(f"user actor failed to start: {str(exc)[:500]}") from None
            except ActorUnavailableError:
                pass
            await asyncio.sleep(0.02 * (attempt + 1))
        raise StoreUnavailable(f"could not activate the actor of user {user_id!r}")

    # ----------------------------------------------------------------------------------- passivation

    def _passivate_over_capacity(self) -> None:
        while len(self._live) > self._max_live:
            key, entry = next(iter(self._live.items()))
            self._passivate(key, entry)

    def _passivate(self, key: UserKey, entry: _Entry) -> None:
        del self._live[key]
        task = asyncio.create_task(self._stop(entry))
        self._passivating[key] = task

        def forget(_: asyncio.Task[None]) -> None:
            if self._passivating.get(key) is task:
                del self._passivating[key]

        task.add_done_callback(forget)

    async def _stop(self, entry: _Entry) -> None:
        try:
            await asyncio.wait_for(entry.handle.passivate.remote(), PASSIVATE_TIMEOUT_SECONDS)
        except RayActorError:
            pass  # expected: passivate exits the actor, so its caller observes the death
        except TimeoutError:
            # a call that never ends must not block the user's next activation forever; an uncommitted
            # write dies with the actor and its caller retries it under the same request id
            log.warning("actor %s did not passivate in time; killing it", entry.handle)
        _release_name(entry.handle)
        self._passivations += 1

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep_forever())

    async def _sweep_forever(self) -> None:
        interval = min(max(self._idle_seconds / 4, 0.05), 30.0)
        while True:
            await asyncio.sleep(interval)
            await self.sweep()


def _release_name(handle: ray.actor.ActorHandle) -> None:
    """Free a dead actor's name at once. Ray keeps the name of an exited actor registered while handles to
    it are held (callers keep theirs), which would make ``get_if_exists`` return the corpse."""
    ray.kill(handle, no_restart=True)


def directory_actor(
    settings: HermesSettings, service_factory: ServiceFactory | None = None
) -> ray.actor.ActorHandle:
    """The cluster's directory: found by name, created (detached, restartable) on first use."""
    return ActorDirectory.options(
        name=DIRECTORY_NAME,
        namespace=settings.namespace,
        get_if_exists=True,
        lifetime="detached",
        max_restarts=-1,
    ).remote(settings.model_dump_json(), service_factory)


async def call_user(
    directory: ray.actor.ActorHandle, tenant_id: str, user_id: str, method: str, *args: Any, **kwargs: Any
) -> Any:
    """Call a service method on the user's actor, retrying once through the directory if the actor died
    (passivated or crashed) before running the call. The current trace context goes along."""
    trace_context = inject_context()
    try:
        handle, incarnation = await directory.get.remote(tenant_id, user_id)
        try:
            return await handle.call.remote(method, *args, trace_context=trace_context, **kwargs)
        except (ActorDiedError, ActorUnavailableError):
            handle, _ = await directory.get.remote(tenant_id, user_id, dead_incarnation=incarnation)
            return await handle.call.remote(method, *args, trace_context=trace_context, **kwargs)
    except RayTaskError as exc:
        if isinstance(exc.cause, HermesError):
            raise exc.cause from None
        raise
