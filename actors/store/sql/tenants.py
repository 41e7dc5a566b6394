"""The tenants and their API keys (``Tenants``, ``Keys``). A key is ``hm_<tenant>_<secret>``, stored only as a
sha256 hex digest.

The tenant id is readable from the key itself, so authentication is one primary-key lookup plus a
constant-time digest comparison; an unknown tenant still pays for a comparison, so timing does not tell
which tenants exist. A tenant's further keys (``api_keys``: keys bound to one user, a rotated-out primary
key during its overlap) have the same shape and are found by their digest within the tenant.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from actors.core.memory import utcnow
from actors.core.tenancy import KeyGrant, KeyInfo, TenantLimits, TenantRecord
from actors.store.sql.database import Database
from actors.store.sql.tables import ApiKeyRow, TenantRow, UserConsentRow
from schemas.errors import InvalidInput, NotFound
from schemas.ids import check_tenant_id, check_user_id
from schemas.settings import GatePolicy

API_KEY_PREFIX = "hm_"
_SECRET_BYTES = 24  # 192 bits, hex-encoded: no "_" inside the secret, so the last "_" splits it off
#: compared against when the tenant does not exist, to keep the failure path as slow as the success path
_ABSENT_TENANT_DIGEST = hashlib.sha256(b"no such tenant").hexdigest()


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


def _key_info(row: ApiKeyRow) -> KeyInfo:
    return KeyInfo(row.key_id, row.user_id, row.label, row.created_at, row.expires_at)


def _not_found(tenant_id: str) -> NotFound:
    return NotFound(f"tenant {tenant_id!r} not found")


class Tenants:
    """The tenants: their registration, policy, quotas and group-profile consent (the tenant's and each
    user's own answer)."""

    def __init__(self, database: Database, default_policy: GatePolicy):
        self._database = database
        #: the policy of tenants without overrides (the service-wide ``HermesSettings.policy``)
        self._default_policy = default_policy

    def create(
        self,
        tenant_id: str,
        name: str = "",
        policy: GatePolicy | None = None,
        group_profile_consent: bool = False,
        limits: TenantLimits | None = None,
    ) -> str:
        """Register a tenant; returns its API key in plaintext (the only time it is ever visible)."""
        check_tenant_id(tenant_id)
        api_key = new_api_key(tenant_id)
        limits = limits or TenantLimits()
        row = TenantRow(
            tenant_id=tenant_id,
            name=name,
            api_key_hash=hash_api_key(api_key),
            policy=policy.model_dump(mode="json") if policy is not None else {},
            group_profile_consent=group_profile_consent,
            created_at=utcnow(),
            max_users=limits.max_users,
            requests_per_minute=limits.requests_per_minute,
        )
        try:
            with self._database.writing("create_tenant") as session:
                if session.get(TenantRow, tenant_id) is not None:
                    raise InvalidInput(f"tenant {tenant_id!r} already exists")
                session.add(row)
        except IntegrityError as error:  # created concurrently by someone else
            raise InvalidInput(f"tenant {tenant_id!r} already exists") from error
        return api_key

    def ids(self) -> list[str]:
        with self._database.reading("tenant_ids") as session:
            return list(session.scalars(select(TenantRow.tenant_id).order_by(TenantRow.tenant_id)))

    def record(self, tenant_id: str) -> TenantRecord:
        with self._database.reading("tenant_record") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise _not_found(tenant_id)
            limits = TenantLimits(max_users=row.max_users, requests_per_minute=row.requests_per_minute)
            return TenantRecord(
                row.tenant_id,
                row.name,
                dict(row.policy or {}),
                row.group_profile_consent,
                limits,
                row.created_at,
            )

    def policy(self, tenant_id: str) -> GatePolicy:
        overrides = self._field(tenant_id, TenantRow.policy)
        if not overrides:
            return self._default_policy.model_copy(deep=True)
        return GatePolicy.model_validate(overrides)

    def set_policy(self, tenant_id: str, policy: GatePolicy) -> None:
        """The tenant's users live under ``policy`` from their next activation on."""
        with self._database.writing("set_tenant_policy") as session:
            self._row(session, tenant_id).policy = policy.model_dump(mode="json")

    def limits(self, tenant_id: str) -> TenantLimits:
        with self._database.reading("tenant_limits") as session:
            columns = select(TenantRow.max_users, TenantRow.requests_per_minute)
            found = session.execute(columns.where(TenantRow.tenant_id == tenant_id)).first()
        if found is None:
            raise _not_found(tenant_id)
        return TenantLimits(max_users=found[0], requests_per_minute=found[1])

    def set_limits(self, tenant_id: str, limits: TenantLimits) -> None:
        with self._database.writing("set_tenant_limits") as session:
            row = self._row(session, tenant_id)
            row.max_users = limits.max_users
            row.requests_per_minute = limits.requests_per_minute

    def group_profile_consent(self, tenant_id: str) -> bool:
        return bool(self._field(tenant_id, TenantRow.group_profile_consent))

    def set_group_profile_consent(self, tenant_id: str, consent: bool) -> None:
        with self._database.writing("set_group_profile_consent") as session:
            self._row(session, tenant_id).group_profile_consent = consent

    def user_consent(self, tenant_id: str, user_id: str) -> bool | None:
        """The user's own answer about group profiles; None: not given (the tenant's answer holds)."""
        with self._database.reading("user_consent") as session:
            row = session.get(UserConsentRow, (tenant_id, user_id))
            return None if row is None else row.group_profiles

    def set_user_consent(self, tenant_id: str, user_id: str, group_profiles: bool) -> None:
        check_user_id(user_id)
        with self._database.writing("set_user_consent") as session:
            self._row(session, tenant_id)
            row = session.get(UserConsentRow, (tenant_id, user_id))
            if row is None:
                row = UserConsentRow(tenant_id=tenant_id, user_id=user_id)
                session.add(row)
            row.group_profiles, row.updated_at = group_profiles, utcnow()

    @staticmethod
    def _row(session: Session, tenant_id: str) -> TenantRow:
        row = session.get(TenantRow, tenant_id)
        if row is None:
            raise _not_found(tenant_id)
        return row

    def _field(self, tenant_id: str, column: Any) -> Any:
        with self._database.reading("tenant") as session:
            found = session.execute(select(column).where(TenantRow.tenant_id == tenant_id)).first()
        if found is None:
            raise _not_found(tenant_id)
        return found[0]


class Keys:
    """The tenants' API keys: what a key reaches, the primary key's rotation, further keys (bound to one
    user, or a rotated-out primary key during its overlap), their listing and revocation."""

    def __init__(self, database: Database):
        self._database = database

    def authenticate(self, api_key: str) -> KeyGrant | None:
        """What ``api_key`` reaches: its tenant's primary key reaches every user; a further key of the tenant
        (not expired) reaches every user or only the one it is bound to; anything else reaches nothing."""
        tenant_id = tenant_named_by(api_key)
        if tenant_id is None:
            key_matches(api_key, None)  # as slow as a lookup
            return None
        with self._database.reading("authenticate") as session:
            stored_digest = session.scalar(
                select(TenantRow.api_key_hash).where(TenantRow.tenant_id == tenant_id)
            )
            if key_matches(api_key, stored_digest):
                return KeyGrant(tenant_id)
            if stored_digest is None:
                return None
            further = session.execute(
                select(ApiKeyRow.user_id, ApiKeyRow.expires_at).where(
                    ApiKeyRow.tenant_id == tenant_id, ApiKeyRow.key_hash == hash_api_key(api_key)
                )
            ).first()
        if further is None or (further.expires_at is not None and further.expires_at <= utcnow()):
            return None
        return KeyGrant(tenant_id, further.user_id)

    def rotate(self, tenant_id: str, overlap_seconds: float = 0.0) -> str:
        """A new primary key for the tenant (returned once). The old one keeps working for
        ``overlap_seconds`` (listed as a tenant-wide key until it expires), so clients can switch over
        without downtime; 0 ends it now."""
        if overlap_seconds < 0:
            raise InvalidInput("overlap_seconds must be >= 0")
        api_key = new_api_key(tenant_id)
        now = utcnow()
        with self._database.writing("rotate_key") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise _not_found(tenant_id)
            if overlap_seconds > 0:
                session.add(
                    ApiKeyRow(
                        key_id=new_key_id(),
                        tenant_id=tenant_id,
                        key_hash=row.api_key_hash,
                        user_id=None,
                        label="previous primary key",
                        created_at=now,
                        expires_at=now + timedelta(seconds=overlap_seconds),
                    )
                )
            row.api_key_hash = hash_api_key(api_key)
        return api_key

    def mint_user_key(self, tenant_id: str, user_id: str, label: str = "") -> tuple[KeyInfo, str]:
        """A key that reaches ``user_id`` only (for an end-user-facing agent); the key is returned once."""
        check_user_id(user_id)
        api_key = new_api_key(tenant_id)
        row = ApiKeyRow(
            key_id=new_key_id(),
            tenant_id=tenant_id,
            key_hash=hash_api_key(api_key),
            user_id=user_id,
            label=label,
            created_at=utcnow(),
            expires_at=None,
        )
        with self._database.writing("mint_user_key") as session:
            if session.get(TenantRow, tenant_id) is None:
                raise _not_found(tenant_id)
            session.add(row)
            info = _key_info(row)
        return info, api_key

    def of_tenant(self, tenant_id: str, *, include_expired: bool = False) -> list[KeyInfo]:
        """The tenant's further keys, oldest first (expired ones only with ``include_expired``)."""
        query = select(ApiKeyRow).where(ApiKeyRow.tenant_id == tenant_id)
        with self._database.reading("api_keys") as session:
            rows = session.scalars(query.order_by(ApiKeyRow.created_at, ApiKeyRow.key_id)).all()
            now = utcnow()
            return [
                _key_info(row)
                for row in rows
                if include_expired or row.expires_at is None or row.expires_at > now
            ]

    def revoke(self, tenant_id: str, key_id: str, grace_seconds: float = 0.0) -> KeyInfo:
        """End a further key now, or after ``grace_seconds`` (a key being replaced); an expiry already
        sooner is kept."""
        if grace_seconds < 0:
            raise InvalidInput("grace_seconds must be >= 0")
        ends = utcnow() + timedelta(seconds=grace_seconds)
        with self._database.writing("revoke_key") as session:
            row = session.get(ApiKeyRow, key_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"key {key_id!r} not found")
            if row.expires_at is None or row.expires_at > ends:
                row.expires_at = ends
            return _key_info(row)
