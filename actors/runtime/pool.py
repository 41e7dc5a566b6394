"""The host pool and the routing to it.

``HostPool`` (one named, detached actor per cluster) creates the ``UserHost`` actors ``host-0 .. host-{n-1}``
spread over the cluster's nodes, resizes the pool, and answers its size. It is off the hot path: replicas
ask it for the size when they start, when a host answers ``WrongHost``, and every few seconds.

``HostRouter`` (in each Serve replica, and in anything else that calls users) picks a user's host by
rendezvous hashing over the pool size and sends the call there: HTTP → replica → host → back, no hop in
between. ``run(tenant_id, user_id, command)`` sends a user command (``actors.app.commands``) and answers
its response type; ``call`` sends any other host call.

Ray does not keep the submission order of calls to an async actor, so the router numbers each user's calls
(a lane per user while any of its calls is unanswered) and sends each at once with its ``Turn``; the host
lets a call into the user's mailbox only after the lane's earlier calls (``actors.runtime.turns``). With the
mailbox, a user's calls run one at a time, in the order each submitter made them; a call that waits has what
it will embed embedded meanwhile, and starts as soon as the previous one leaves the mailbox. A host that
is down (its node died; Ray restarts it, on another node if need be) is retried with backoff, with the same
turn; writes carry their request id, so a write retried after its host died is applied once.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias, TypeVar

import ray
from pydantic import BaseModel
from ray.actor import ActorHandle, ActorProxy
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from actors.app.commands import UserCommand
from actors.runtime.host import POOL_ACTOR_NAME, HostActor, HostHandle, HostStats, UserHost, host_name
from actors.runtime.rendezvous import host_of
from actors.runtime.turns import Turn
from schemas.errors import HermesError, StoreUnavailable, WrongHost
from schemas.settings import HermesSettings

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)
log = logging.getLogger(__name__)

#: how long a call keeps retrying a host that is down before answering 503
RETRY_SECONDS = 60.0
#: a replica asks the pool for its size at least this often
MEMBERSHIP_SECONDS = 5.0


def _host_options(settings: HermesSettings, index: int) -> dict[str, Any]:
    return {
        "name": host_name(index),
        "namespace": settings.namespace,
        "get_if_exists": True,
        "lifetime": "detached",
        "max_restarts": -1,
        **_placement(settings, index),
    }


def _placement(settings: HermesSettings, index: int) -> dict[str, Any]:
    if settings.host_resource:  # a sliver: the resource says where, it rations nothing
        return {"resources": {f"{settings.host_resource}{index}": 0.001}}
    return {"scheduling_strategy": "SPREAD"}


class HostPool:
    def __init__(self, settings_json: str, size: int):
        self._settings_json = settings_json
        self._settings = HermesSettings.model_validate_json(settings_json)
        self._size = 0
        self._hosts: list[HostHandle] = []
        self._resizing = asyncio.Lock()
        self._initial = size

    @ray.method
    def size(self) -> int:
        return self._size or self._initial

    @ray.method
    async def ensure(self) -> int:
        """Create the pool's hosts (idempotent) and wait until each has started."""
        return await self._ensure()

    async def _ensure(self) -> int:
        if not self._size:
            await self._resize(self._initial)
        return self._size

    @ray.method
    async def resize(self, size: int) -> int:
        """Grow or shrink the pool; the size it had."""
        return await self._resize(size)

    async def _resize(self, size: int) -> int:
        """Grow or shrink the pool. New hosts start first; then every host learns the new size and
        passivates the users it no longer serves; hosts beyond the new size are stopped last."""
        if size < 1:
            raise ValueError("a pool needs at least one host")
        async with self._resizing:
            previous = self._size
            for index in range(len(self._hosts), size):
                host = HostActor.options(**_host_options(self._settings, index))
                self._hosts.append(host.remote(index, self._settings_json, size))
            # a host answers once it has started
            await asyncio.gather(*(h.node_id.remote() for h in self._hosts[:size]))
            self._size = size
            await asyncio.gather(*(h.set_pool_size.remote(size) for h in self._hosts))
            for stopped in self._hosts[size:]:
                await stopped.passivate_all.remote()
                if isinstance(stopped, ActorHandle):  # always: Ray types a handle as the handle or the class
                    ray.kill(stopped, no_restart=True)
            del self._hosts[size:]
            return previous

    @ray.method
    async def stats(self) -> list[HostStats]:
        await self._ensure()  # a restarted pool finds its hosts again by name
        return list(await asyncio.gather(*(h.stats.remote() for h in self._hosts[: self._size])))

    @ray.method
    async def drain_outboxes(self) -> int:
        """Every host applies its users' pending outbox entries now; returns how many (tests, shutdown)."""
        await self._ensure()
        return sum(await asyncio.gather(*(h.drain_outbox.remote() for h in self._hosts[: self._size])))


PoolActor = ray.remote(num_cpus=0)(HostPool)
PoolHandle: TypeAlias = ActorProxy[HostPool]


def pool_actor(settings: HermesSettings) -> PoolHandle:
    """The cluster's pool: found by name, created on first use with ``settings.hosts`` hosts (0: one per
    CPU of the cluster)."""
    size = settings.hosts or max(1, int(ray.cluster_resources().get("CPU", 1)))
    return PoolActor.options(
        name=POOL_ACTOR_NAME,
        namespace=settings.namespace,
        get_if_exists=True,
        lifetime="detached",
        max_restarts=-1,
    ).remote(settings.model_dump_json(), size)


class _SentLane:
    """A user's calls sent by this router and not yet answered."""

    __slots__ = ("name", "next", "unanswered")

    def __init__(self, name: str) -> None:
        self.name = name
        self.next = 0
        self.unanswered: set[int] = set()


class HostRouter:
    """Sends a user's call to the user's host; one per replica (or job driver)."""

    def __init__(self, settings: HermesSettings, pool: PoolHandle | None = None):
        self._namespace = settings.namespace
        self.pool = pool if pool is not None else pool_actor(settings)
        self._size = 0
        self._size_read = 0.0
        self._hosts: dict[int, HostHandle] = {}
        self._lanes: dict[tuple[str, str], _SentLane] = {}
        #: lane names are unique across routers (the hosts keep the lanes of every router that calls them)
        self._lane_names = (f"{uuid.uuid4().hex[:12]}-{n}" for n in itertools.count())

    async def pool_size(self, refresh: bool = False) -> int:
        if refresh or not self._size or time.monotonic() - self._size_read > MEMBERSHIP_SECONDS:
            self._size = await self.pool.size.remote()
            self._size_read = time.monotonic()
        return self._size

    def _host(self, index: int) -> HostHandle:
        host = self._hosts.get(index)
        if host is None:
            found: HostHandle = ray.get_actor(host_name(index), namespace=self._namespace)
            host = self._hosts[index] = found
        return host

    async def run(
        self,
        tenant_id: str,
        user_id: str,
        command: UserCommand[R],
        trace_context: dict[str, str] | None = None,
    ) -> R:
        """``command`` run by the user's host (``UserHost.run``), after the calls this router sent for the
        user before it."""
        key = (tenant_id, user_id)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _SentLane(next(self._lane_names))
        seq = lane.next
        lane.next += 1
        lane.unanswered.add(seq)

        async def send(host: HostHandle) -> R:
            turn = Turn(lane.name, seq, min(lane.unanswered))  # a resend tells what has been answered since
            return command.answer(await host.run.remote(tenant_id, user_id, command, trace_context, turn))

        try:
            return await self.call(tenant_id, user_id, send)
        finally:
            lane.unanswered.discard(seq)
            if not lane.unanswered:
                del self._lanes[key]

    async def call(self, tenant_id: str, user_id: str, send: Callable[[HostHandle], Awaitable[T]]) -> T:
        """``send(host)`` calls one method of the user's host, e.g. ``lambda h: h.passivate_all.remote()``,
        resent while the host is down or the pool is being resized; not ordered with the user's calls."""
        deadline = time.monotonic() + RETRY_SECONDS
        delay = 0.05
        refresh = False
        while True:
            index = host_of(tenant_id, user_id, await self.pool_size(refresh))
            refresh = False
            try:
                return await send(self._host(index))
            except RayTaskError as exc:
                if isinstance(exc.cause, WrongHost) and time.monotonic() < deadline:
                    refresh = True  # the pool was resized: ask it again, then resend
                    await asyncio.sleep(0.01)
                    continue
                if isinstance(exc.cause, HermesError):
                    raise exc.cause from None
                raise
            except (ActorDiedError, ActorUnavailableError, RayActorError, ValueError) as exc:
                # the host is restarting (ValueError: not registered yet); the pool may have changed too
                self._hosts.pop(index, None)
                if time.monotonic() > deadline:
                    raise StoreUnavailable(f"user host unavailable: {type(exc).__name__}") from exc
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                refresh = True


__all__ = ["HostPool", "HostRouter", "PoolActor", "pool_actor", "UserHost"]
