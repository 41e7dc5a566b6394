"""Per-tenant quotas and rate limits (docs/trust.md#2-isolation): one tenant's traffic must not starve the
others.

Limits live in the ``tenants`` table (``requests_per_minute``, ``max_users``; NULL = unlimited) and are read
through ``TenantDirectory.limits``, cached for ``refresh_seconds`` so a busy replica does not query SQL on
every request (a changed limit takes effect within that time).

* Rate: a token bucket per tenant holding at most one minute's allowance, refilled continuously. Every
  tenant-authenticated call takes one token; an empty bucket answers ``RateLimited`` (HTTP 429) with
  ``Retry-After`` = the time until the next token.
* Users: a command that stores memories (its declared effect, ``actors.app.commands``) for a user the
  tenant has never stored anything for is refused with ``QuotaExceeded`` (HTTP 429) once the tenant already
  holds ``max_users`` users. Other operations are never refused by this quota.

Both are enforced per Serve replica (no cross-replica coordination on the hot path): with N replicas a
tenant gets up to N × its rate, and two replicas admitting two new users at the same instant may overshoot
``max_users`` by one each. The quota is a guard against runaway tenants, not a billing meter.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from actors.app.commands import Effect
from actors.app.directory import TenantDirectory
from actors.core.tenancy import TenantLimits
from schemas.errors import QuotaExceeded, RateLimited

#: how long a replica trusts the limits and user counts it read from SQL
REFRESH_SECONDS = 5.0


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


@dataclass(slots=True)
class _TenantState:
    limits: TenantLimits
    read_at: float
    #: users known to exist (they hold memories), so their writes skip the quota query
    known_users: set[str] = field(default_factory=set)


class Quotas:
    def __init__(
        self,
        directory: TenantDirectory,
        refresh_seconds: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._directory = directory
        self._refresh = refresh_seconds
        self._clock = clock
        self._tenants: dict[str, _TenantState] = {}
        self._buckets: dict[str, _Bucket] = {}

    async def admit(self, tenant_id: str, user_id: str, effect: Effect) -> None:
        """A user command of this ``effect``: take one request token for the tenant; for one that stores
        memories (it may bring a new user into the tenant), check the user quota. Raises when refused."""
        state = await self._take_request(tenant_id)
        if effect is Effect.STORES and state.limits.max_users is not None:
            await self._admit_user(state, tenant_id, user_id, state.limits.max_users)

    async def admit_tenant_view(self, tenant_id: str) -> None:
        """A tenant-wide view (no user's operation): take one request token. Raises when refused."""
        await self._take_request(tenant_id)

    async def _take_request(self, tenant_id: str) -> _TenantState:
        state = await self._state(tenant_id)
        self._take_token(tenant_id, state.limits.requests_per_minute)
        return state

    async def _state(self, tenant_id: str) -> _TenantState:
        now = self._clock()
        state = self._tenants.get(tenant_id)
        if state is None or now - state.read_at >= self._refresh:
            limits = await asyncio.to_thread(self._directory.limits, tenant_id)
            state = _TenantState(limits=limits, read_at=now)
            self._tenants[tenant_id] = state
        return state

    def _take_token(self, tenant_id: str, per_minute: int | None) -> None:
        if per_minute is None:
            self._buckets.pop(tenant_id, None)
            return
        now = self._clock()
        bucket = self._buckets.get(tenant_id)
        if bucket is None:
            bucket = self._buckets[tenant_id] = _Bucket(tokens=float(per_minute), stamp=now)
        rate = per_minute / 60.0
        bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        if bucket.tokens < 1.0:
            wait = (1.0 - bucket.tokens) / rate
            raise RateLimited(
                f"tenant rate limit of {per_minute} requests per minute reached; retry later",
                retry_after_seconds=max(1, math.ceil(wait)),
            )
        bucket.tokens -= 1.0

    async def _admit_user(self, state: _TenantState, tenant_id: str, user_id: str, max_users: int) -> None:
        if user_id in state.known_users:
            return
        exists, users = await asyncio.to_thread(self._directory.user_usage, tenant_id, user_id)
        if not exists and users >= max_users:
            raise QuotaExceeded(f"tenant quota of {max_users} users reached; erase users or raise the quota")
        state.known_users.add(user_id)
