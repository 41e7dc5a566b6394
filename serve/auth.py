"""Who is calling: a tenant, by its API key (``X-API-Key``), or an operator, by the admin key
(``X-Admin-Key``).

Tenant keys are checked by ``MemoryStore.authenticate`` (hashed lookup, constant-time compare), and the
answer is kept for ``KEY_CACHE_SECONDS`` per replica (by the key's digest, never the key), so the hot path
does not query SQL on every request; a rotated or revoked key stops working within that time. The admin
key comes from ``settings.admin_key``; when it is empty the admin endpoints are disabled for everyone.

It raises ``Unauthorized`` (no key, or a key no tenant owns) and ``Forbidden`` (admin endpoints disabled,
or a wrong admin key), of ``schemas.errors``.
"""

import asyncio
import hashlib
import hmac
import time
from collections.abc import Callable

from actors.store.sql.store import MemoryStore
from schemas.errors import Forbidden, Unauthorized

#: keys longer than this are refused before any hashing or SQL
MAX_KEY_CHARS = 256
#: how long a replica trusts an answer about a key (a revoked key keeps working at most this long)
KEY_CACHE_SECONDS = 5.0
#: most keys remembered per replica
KEY_CACHE_SIZE = 10_000


class Authenticator:
    def __init__(
        self, store: MemoryStore, admin_key: str, clock: Callable[[], float] = time.monotonic
    ):
        self._store = store
        self._admin_key = admin_key
        self._clock = clock
        self._known: dict[bytes, tuple[float, str | None]] = {}

    async def tenant_for(self, api_key: str | None) -> str:
        """The tenant owning ``api_key``; raises ``Unauthorized`` otherwise (without saying why)."""
        if not api_key or len(api_key) > MAX_KEY_CHARS:
            raise Unauthorized("missing or invalid API key (header X-API-Key)")
        digest = hashlib.sha256(api_key.encode()).digest()
        known = self._known.get(digest)
        if known is not None and self._clock() - known[0] < KEY_CACHE_SECONDS:
            tenant_id = known[1]
        else:
            tenant_id = await asyncio.to_thread(self._store.authenticate, api_key)
            if len(self._known) >= KEY_CACHE_SIZE:
                self._known.clear()
            self._known[digest] = (self._clock(), tenant_id)
        if tenant_id is None:
            raise Unauthorized("missing or invalid API key (header X-API-Key)")
        return tenant_id

    def check_admin(self, admin_key: str | None) -> None:
        if not self._admin_key:
            raise Forbidden("admin endpoints are disabled (set HERMES_ADMIN_KEY to enable them)")
        if not admin_key or not hmac.compare_digest(admin_key.encode(), self._admin_key.encode()):
            raise Forbidden("invalid admin key (header X-Admin-Key)")
