"""One tenant's own settings, changed by the tenant (its tenant key) or by an operator (the admin key): its
API keys (per-user keys, rotation), and (``schemas.api_tenant``) its policy, quotas and group-profile consent.

``TenantAdmin`` writes the tenant's rows in SQL directly: none of this is a user's memory, so nothing here
goes through a user's host. Answers are the API models of ``schemas.api_tenant``; a key's plaintext is in an
answer once, when it is minted.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from actors.core.memory import utcnow
from actors.core.tenancy import TenantLimits
from actors.store.sql.store import MemoryStore
from schemas.api_tenant import (
    ApiKeyList,
    ApiKeyMinted,
    ApiKeyOut,
    KeyRotated,
    TenantLimitsIn,
    TenantSettings,
    UserConsent,
)
from schemas.errors import InvalidInput
from schemas.settings import GatePolicy


class TenantAdmin:
    def __init__(self, store: MemoryStore, tenant_id: str):
        self._store = store
        self.tenant_id = tenant_id

    # ----------------------------------------------------------------------------------------- keys

    def mint_user_key(self, user_id: str, label: str = "") -> ApiKeyMinted:
        """A key that reaches ``user_id`` only."""
        info, api_key = self._store.keys.mint_user_key(self.tenant_id, user_id, label)
        return ApiKeyMinted(**ApiKeyOut.model_validate(info).model_dump(), api_key=api_key)

    def keys(self) -> ApiKeyList:
        """The per-user keys, and rotated-out keys still in their overlap (never the keys themselves)."""
        return ApiKeyList(
            keys=[ApiKeyOut.model_validate(info) for info in self._store.keys.of_tenant(self.tenant_id)]
        )

    def revoke_key(self, key_id: str, grace_seconds: float = 0.0) -> ApiKeyOut:
        return ApiKeyOut.model_validate(self._store.keys.revoke(self.tenant_id, key_id, grace_seconds))

    def rotate_key(self, overlap_seconds: float) -> KeyRotated:
        """A new tenant key; the old one works ``overlap_seconds`` longer."""
        api_key = self._store.keys.rotate(self.tenant_id, overlap_seconds)
        ends = utcnow() + timedelta(seconds=overlap_seconds)
        return KeyRotated(tenant_id=self.tenant_id, api_key=api_key, previous_key_expires_at=ends)

    # ------------------------------------------------------------------------- policy and quotas

    def settings(self) -> TenantSettings:
        record = self._store.tenants.record(self.tenant_id)
        return TenantSettings(
            tenant_id=record.tenant_id,
            name=record.name,
            policy=self._store.tenants.policy(self.tenant_id),
            limits=TenantLimitsIn.model_validate(record.limits),
            group_profile_consent=record.group_profile_consent,
            created_at=record.created_at,
        )

    def change_policy(self, changes: dict[str, Any]) -> TenantSettings:
        """The tenant's policy with ``changes`` (any part of a ``GatePolicy``, nested, e.g.
        ``{"capacities": {"working": 50}}``) applied over it; an unknown field or a value out of its range
        is refused with the field's path, and nothing changes."""
        current = self._store.tenants.policy(self.tenant_id).model_dump(mode="json")
        try:
            policy = GatePolicy.model_validate(_merged(current, changes))
        except ValidationError as error:
            raise InvalidInput(f"policy: {_problems(error)}") from None
        self._store.tenants.set_policy(self.tenant_id, policy)
        return self.settings()

    def set_limits(self, limits: TenantLimitsIn) -> TenantSettings:
        self._store.tenants.set_limits(
            self.tenant_id, TenantLimits(limits.max_users, limits.requests_per_minute)
        )
        return self.settings()

    # ---------------------------------------------------------------------------- group profiles

    def set_group_profile_consent(self, consent: bool) -> TenantSettings:
        self._store.tenants.set_group_profile_consent(self.tenant_id, consent)
        return self.settings()

    def user_consent(self, user_id: str) -> UserConsent:
        answer = self._store.tenants.user_consent(self.tenant_id, user_id)
        tenant = self._store.tenants.group_profile_consent(self.tenant_id)
        return UserConsent(user_id=user_id, group_profiles=answer, counted=tenant and answer is not False)

    def set_user_consent(self, user_id: str, group_profiles: bool) -> UserConsent:
        self._store.tenants.set_user_consent(self.tenant_id, user_id, group_profiles)
        return self.user_consent(user_id)


def _merged(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` laid over ``base``: nested objects merge, anything else replaces."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _problems(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in problem['loc'])}: {problem['msg']}" for problem in error.errors()
    )
