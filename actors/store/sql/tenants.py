"""Tenant API keys: ``hm_<tenant>_<secret>``, stored only as a sha256 hex digest.

The tenant id is readable from the key itself, so authentication is one primary-key lookup plus a
constant-time digest comparison; an unknown tenant still pays for a comparison, so timing does not tell
which tenants exist. A tenant's further keys (``api_keys``: keys bound to one user, a rotated-out primary
key during its overlap) have the same shape and are found by their digest within the tenant.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

API_KEY_PREFIX = "hm_"
_SECRET_BYTES = 24  # 192 bits, hex-encoded: no "_" inside the secret, so the last "_" splits it off
#: compared against when the tenant does not exist, to keep the failure path as slow as the success path
_ABSENT_TENANT_DIGEST = hashlib.sha256(b"no such tenant").hexdigest()


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


def new_key_id() -> str:
    return f"k_{secrets.token_hex(8)}"


def new_api_key(tenant_id: str) -> str:
    return f"{API_KEY_PREFIX}{tenant_id}_{secrets.token_hex(_SECRET_BYTES)}"


def hash_api_key(api_key: str) -> str:
    return hashlib.sha256(api_key.encode()).hexdigest()


def tenant_named_by(api_key: str) -> str | None:
    """The tenant id a well-formed key claims (not yet verified), or None for a malformed key."""
    if not api_key.startswith(API_KEY_PREFIX):
        return None
    tenant_id, separator, secret = api_key.removeprefix(API_KEY_PREFIX).rpartition("_")
    if not separator or not tenant_id or not secret:
        return None
    return tenant_id


def key_matches(api_key: str, stored_digest: str | None) -> bool:
    expected = stored_digest if stored_digest is not None else _ABSENT_TENANT_DIGEST
    return hmac.compare_digest(hash_api_key(api_key), expected) and stored_digest is not None
