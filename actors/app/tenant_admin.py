"""One tenant's own settings, changed by the tenant (its tenant key) or by an operator (the admin key): its
API keys (per-user keys, rotation), and (``schemas.api_tenant``) its policy, quotas and group-profile consent.

``TenantAdmin`` writes the tenant's rows in SQL directly: none of this is a user's memory, so nothing here
goes through a user's host. Answers are the API models of ``schemas.api_tenant``; a key's plaintext is in an
answer once, when it is minted.
"""

from __future__ import annotations

from datetime import timedelta

from actors.core.memory import utcnow
from actors.store.sql.store import MemoryStore
from schemas.api_tenant import ApiKeyList, ApiKeyMinted, ApiKeyOut, KeyRotated


class TenantAdmin:
    def __init__(self, store: MemoryStore, tenant_id: str):
        self._store = store
        self.tenant_id = tenant_id

    # ----------------------------------------------------------------------------------------- keys

    def mint_user_key(self, user_id: str, label: str = "") -> ApiKeyMinted:
        """A key that reaches ``user_id`` only."""
        info, api_key = self._store.mint_user_key(self.tenant_id, user_id, label)
        return ApiKeyMinted(**ApiKeyOut.model_validate(info).model_dump(), api_key=api_key)

    def keys(self) -> ApiKeyList:
        """The per-user keys, and rotated-out keys still in their overlap (never the keys themselves)."""
        return ApiKeyList(
            keys=[ApiKeyOut.model_validate(info) for info in self._store.api_keys(self.tenant_id)]
        )

    def revoke_key(self, key_id: str, grace_seconds: float = 0.0) -> ApiKeyOut:
        return ApiKeyOut.model_validate(self._store.revoke_key(self.tenant_id, key_id, grace_seconds))

    def rotate_key(self, overlap_seconds: float) -> KeyRotated:
        """A new tenant key; the old one works ``overlap_seconds`` longer."""
        api_key = self._store.rotate_key(self.tenant_id, overlap_seconds)
        ends = utcnow() + timedelta(seconds=overlap_seconds)
        return KeyRotated(tenant_id=self.tenant_id, api_key=api_key, previous_key_expires_at=ends)
