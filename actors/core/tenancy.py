"""What a tenant is, as the doors and the store exchange it: its quotas, its stored settings, what an API
key reaches and how a further key is listed. Plain values: the store (``actors.store.sql.tenants``) reads
and writes them, the HTTP door (``serve.auth``, ``serve.quotas``) decides with them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class TenantLimits:
    """A tenant's quotas (``serve.quotas``); None = unlimited."""

    max_users: int | None = None
    requests_per_minute: int | None = None


@dataclass(frozen=True, slots=True)
class TenantRecord:
    """A tenant's own settings as stored (never its key)."""

    tenant_id: str
    name: str
    #: the stored overrides of the service's policy (empty: the defaults)
    policy: dict[str, Any]
    group_profile_consent: bool
    limits: TenantLimits
    created_at: datetime


@dataclass(frozen=True, slots=True)
class KeyGrant:
    """What a valid key lets its caller reach: one tenant, and within it every user (``user_id`` None) or
    only the user the key is bound to."""

    tenant_id: str
    user_id: str | None = None


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """A further key as listed (never the key itself)."""

    key_id: str
    user_id: str | None
    label: str
    created_at: datetime
    expires_at: datetime | None
