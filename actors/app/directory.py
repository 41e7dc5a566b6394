"""The tenants as the HTTP door sees them (``serve``): what an API key reaches, a tenant's quotas and user
count, the tenant list, a new tenant, and the tenant's read-only view and settings. The door reaches the
SQL store only through this directory (an import contract forbids ``serve`` → ``actors.store``).
"""

from __future__ import annotations

from actors.app.tenant_admin import TenantAdmin
from actors.app.tenant_view import TenantView
from actors.core.tenancy import KeyGrant, TenantLimits
from actors.store.sql.store import MemoryStore
from schemas.settings import HermesSettings


def create_schema(settings: HermesSettings) -> None:
    """Create or upgrade the SQL schema the settings name (idempotent), before any replica starts."""
    store = MemoryStore.from_settings(settings)
    try:
        store.create_schema()
    finally:
        store.dispose()


class TenantDirectory:
    def __init__(self, store: MemoryStore):
        self._store = store

    @classmethod
    def connect(cls, settings: HermesSettings) -> TenantDirectory:
        return cls(MemoryStore.from_settings(settings))

    def authenticate(self, api_key: str) -> KeyGrant | None:
        return self._store.keys.authenticate(api_key)

    def limits(self, tenant_id: str) -> TenantLimits:
        return self._store.tenants.limits(tenant_id)

    def user_usage(self, tenant_id: str, user_id: str) -> tuple[bool, int]:
        """Whether the user holds any item in the tenant, and how many users do (for the user quota)."""
        return self._store.memories.usage(tenant_id, user_id)

    def tenant_ids(self) -> list[str]:
        return self._store.tenants.ids()

    def create_tenant(
        self, tenant_id: str, name: str, group_profile_consent: bool, limits: TenantLimits
    ) -> str:
        """Register a tenant; returns its API key in plaintext (the only time it is ever visible)."""
        return self._store.tenants.create(
            tenant_id, name, group_profile_consent=group_profile_consent, limits=limits
        )

    def view(self, tenant_id: str) -> TenantView:
        return TenantView(self._store, tenant_id)

    def admin(self, tenant_id: str) -> TenantAdmin:
        return TenantAdmin(self._store, tenant_id)
