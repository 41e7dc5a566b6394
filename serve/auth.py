"""Who is calling: a tenant, by an API key (``X-API-Key``), or an operator, by the admin key
(``X-Admin-Key``).

Keys are checked by ``TenantDirectory.authenticate`` (hashed lookup, constant-time compare), which answers
with a ``KeyGrant``: the tenant, and the one user the key is bound to (a per-user key) or None (a tenant key).
The answer is kept for ``KEY_CACHE_SECONDS`` per replica (by the key's digest, never the key), so the hot
path does not query SQL on every request; a rotated, expired or revoked key stops working within that time.
Every door asks ``tenant_for(key, user_id)`` with the user the call names: a per-user key naming another
user, or a tenant-wide operation (``user_id`` None), is refused. The admin key comes from
``settings.admin_key``; when it is empty the admin endpoints are disabled for everyone.

It raises ``Unauthorized`` (no key, or a key no tenant owns) and ``Forbidden`` (admin endpoints disabled,
a wrong admin key, or a per-user key used beyond its user), of ``schemas.errors``.
"""

import asyncio
import hashlib
import hmac
import time
from collections.abc import Callable

from actors.app.directory import TenantDirectory
from actors.core.tenancy import KeyGrant
from schemas.errors import Forbidden, Unauthorized

#: keys longer than this are refused before any hashing or SQL
MAX_KEY_CHARS = 256
#: how long a replica trusts an answer about a key (a revoked or expired key keeps working at most this long)
KEY_CACHE_SECONDS = 5.0
#: most keys remembered per replica
KEY_CACHE_SIZE = 10_000


class Authenticator:
    def __init__(
        self, directory: TenantDirectory, admin_key: str, clock: Callable[[], float] = time.monotonic
    ):
        self._directory = directory
        self._admin_key = admin_key
        self._clock = clock
        self._known: dict[bytes, tuple[float, KeyGrant | None]] = {}

    async def grant_for(self, api_key: str | None) -> KeyGrant:
        """What ``api_key`` reaches; raises ``Unauthorized`` when it reaches nothing (without saying why)."""
        if not api_key or len(api_key) > MAX_KEY_CHARS:
            raise Unauthorized("missing or invalid API key (header X-API-Key)")
        digest = hashlib.sha256(api_key.encode()).digest()
        known = self._known.get(digest)
        if known is not None and self._clock() - known[0] < KEY_CACHE_SECONDS:
            grant = known[1]
        else:
            grant = await asyncio.to_thread(self._directory.authenticate, api_key)
            if len(self._known) >= KEY_CACHE_SIZE:
                self._known.clear()
            self._known[digest] = (self._clock(), grant)
        if grant is None:
            raise Unauthorized("missing or invalid API key (header X-API-Key)")
        return grant

    async def tenant_for(self, api_key: str | None, user_id: str | None = None) -> str:
        """The tenant of ``api_key``, once it may reach ``user_id`` (None: an operation over the tenant)."""
        grant = await self.grant_for(api_key)
        check_reach(grant, user_id)
        return grant.tenant_id

    def check_admin(self, admin_key: str | None) -> None:
        if not self._admin_key:
            raise Forbidden("admin endpoints are disabled (set HERMES_ADMIN_KEY to enable them)")
        if not admin_key or not hmac.compare_digest(admin_key.encode(), self._admin_key.encode()):
            raise Forbidden("invalid admin key (header X-Admin-Key)")


def check_reach(grant: KeyGrant, user_id: str | None) -> None:
    """Refuse a per-user key a call naming another user, or naming none (a tenant-wide operation)."""
    if grant.user_id is None or grant.user_id == user_id:
        return
    if user_id is None:
        raise Forbidden(
            f"this API key is bound to user {grant.user_id!r}: tenant-wide endpoints need a tenant key"
        )
    raise Forbidden(f"this API key is bound to user {grant.user_id!r} and cannot reach another user")
