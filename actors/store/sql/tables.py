"""The SQL tables: the source of truth of every tenant's and user's memory (docs/architecture.md,
docs/trust.md).

Column names of ``MemoryItemRow`` are exactly the field names of ``actors.core.memory.MemoryItem`` so the
mapping in ``actors.store.sql.mapping`` is one loop. Enums are stored as plain strings (``native_enum=False``)
so a new enum value never needs an ``ALTER TYPE`` on PostgreSQL. The schema itself is created only through the
Alembic migrations in ``actors/store/sql/migrations`` (a test checks they match these models).
"""

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from schemas.enums import AlertKind, AlertStatus, Kind, Layer, Polarity, Source, State

ID_LENGTH = 128  # user, session and dialog ids (schemas/ids.py allows up to 128 characters)
TENANT_ID_LENGTH = 48
MEMORY_ID_LENGTH = 64
ENUM_LENGTH = 32

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in, timezone-aware UTC out, on every dialect.

    SQLite has no timezone type: values are stored as UTC text and come back naive, so the one conversion
    back to aware UTC lives here. A naive datetime handed in is taken to be UTC already.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def enum_column(enum_cls: type) -> Enum:
    """A VARCHAR holding the enum's value (not its name); loads back as the enum member."""
    return Enum(
        enum_cls,
        native_enum=False,
        create_constraint=False,
        length=ENUM_LENGTH,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )


def id_list() -> Mapped[list[str]]:
    return mapped_column(JSON, default=list, nullable=False)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


# Autoincrement on SQLite needs the INTEGER PRIMARY KEY rowid alias; PostgreSQL gets a 64-bit identity.
AutoId = BigInteger().with_variant(Integer(), "sqlite")


class TenantRow(Base):
    __tablename__ = "tenants"

    tenant_id: Mapped[str] = mapped_column(String(TENANT_ID_LENGTH), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    #: sha256 hex of the API key; the plaintext key is returned once, at creation or rotation
    api_key_hash: Mapped[str] = mapped_column(String(64))
    #: overrides of the service-wide GatePolicy (a partial ``GatePolicy`` dump); empty = defaults
    policy: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    group_profile_consent: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    max_users: Mapped[int | None] = mapped_column(Integer)
    requests_per_minute: Mapped[int | None] = mapped_column(Integer)


class ApiKeyRow(Base):
    """A tenant's further keys beside its primary one: keys bound to one user (which reach that user only) and
    a replaced primary key kept valid until ``expires_at`` (rotation without downtime). Only the sha256 hex
    digest of a key is stored; ``key_id`` names it for listing and revoking."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE")
    )
    key_hash: Mapped[str] = mapped_column(String(64))
    #: NULL: a tenant-wide key (a rotated-out primary key in its overlap); else the one user it reaches
    user_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    #: the key stops working at this time (NULL: never); revoking sets it to now
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_api_keys_tenant_hash", "tenant_id", "key_hash", unique=True),)


class UserConsentRow(Base):
    """A user's own answer about group profiles, beside the tenant's: False keeps the user out of the
    tenant's cohort counts whatever the tenant agreed; no row (or True) follows the tenant."""

    __tablename__ = "user_consents"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    group_profiles: Mapped[bool] = mapped_column(Boolean)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class MemoryItemRow(Base):
    __tablename__ = "memory_items"

    memory_id: Mapped[str] = mapped_column(String(MEMORY_ID_LENGTH), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE")
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    content: Mapped[str] = mapped_column(Text)
    kind: Mapped[Kind] = mapped_column(enum_column(Kind))
    layer: Mapped[Layer] = mapped_column(enum_column(Layer))
    state: Mapped[State] = mapped_column(enum_column(State))
    polarity: Mapped[Polarity] = mapped_column(enum_column(Polarity))
    slot: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    value: Mapped[str | None] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    importance: Mapped[float] = mapped_column(Float)
    confidence: Mapped[float] = mapped_column(Float)
    decay_score: Mapped[float] = mapped_column(Float)
    write_score: Mapped[float] = mapped_column(Float)
    access_count: Mapped[int] = mapped_column(Integer)
    source: Mapped[Source] = mapped_column(enum_column(Source))
    source_session_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    source_dialog_ids: Mapped[list[str]] = id_list()
    confirmed_sessions: Mapped[list[str]] = id_list()
    contradiction_count: Mapped[int] = mapped_column(Integer)
    positive_engagements: Mapped[int] = mapped_column(Integer)
    forced: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_accessed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    frozen_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    version: Mapped[int] = mapped_column(Integer)
    supersedes: Mapped[list[str]] = id_list()
    superseded_by: Mapped[str | None] = mapped_column(String(MEMORY_ID_LENGTH))
    conflicts_with: Mapped[list[str]] = id_list()
    complements: Mapped[list[str]] = id_list()
    merged_from: Mapped[list[str]] = id_list()
    #: the content's float32 vector as raw bytes, kept so the index can be rebuilt without re-embedding
    #: (the service reads and writes ``MemoryItem.embedding``)
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: the whole turn an extracted clause came from (``MemoryItem.source_text``)
    source_text: Mapped[str | None] = mapped_column(Text)
    #: the turns said just before it in its session (``MemoryItem.context``), sealed like the content
    context: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_memory_items_scope_state", "tenant_id", "user_id", "state"),
        # a layer's items of a period (recall naming an old month reads the archive beyond memory by it)
        Index("ix_memory_items_scope_layer_created", "tenant_id", "user_id", "layer", "created_at"),
        Index("ix_memory_items_scope_content_hash", "tenant_id", "user_id", "content_hash"),
        Index("ix_memory_items_scope_slot", "tenant_id", "user_id", "slot"),
    )
    # Optimistic lock: every UPDATE is "... WHERE memory_id = ? AND version = <loaded>" and bumps it.
    __mapper_args__ = {"version_id_col": version}


class AuditEventRow(Base):
    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_ID_LENGTH))
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    memory_id: Mapped[str | None] = mapped_column(String(MEMORY_ID_LENGTH))
    action: Mapped[str] = mapped_column(String(64))
    actor: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str] = mapped_column(Text)
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    source_dialog_id: Mapped[str | None] = mapped_column(String(ID_LENGTH))
    at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_audit_events_scope_memory", "tenant_id", "user_id", "memory_id"),)


class AlertRow(Base):
    __tablename__ = "alerts"

    alert_id: Mapped[str] = mapped_column(String(MEMORY_ID_LENGTH), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE")
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    kind: Mapped[AlertKind] = mapped_column(enum_column(AlertKind))
    memory_id: Mapped[str | None] = mapped_column(String(MEMORY_ID_LENGTH))
    message: Mapped[str] = mapped_column(Text)
    related_ids: Mapped[list[str]] = id_list()
    status: Mapped[AlertStatus] = mapped_column(enum_column(AlertStatus))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_alerts_scope_status", "tenant_id", "user_id", "status"),)


class SessionSnapshotRow(Base):
    """A session's context snapshot: written once, then returned byte-identical (LLM prefix caches)."""

    __tablename__ = "session_snapshots"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class AppliedRequestRow(Base):
    """A write that was applied, keyed by the caller's request id, so a retried write is not applied twice."""

    __tablename__ = "applied_requests"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    request_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    result: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[datetime] = mapped_column(UTCDateTime)


class TombstoneRow(Base):
    """What forgetting leaves: that something was removed, when and why, never what it was."""

    __tablename__ = "tombstones"

    id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_ID_LENGTH))
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    #: NULL: the whole user was erased
    memory_id: Mapped[str | None] = mapped_column(String(MEMORY_ID_LENGTH))
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    reason: Mapped[str] = mapped_column(Text)

    __table_args__ = (Index("ix_tombstones_scope_memory", "tenant_id", "user_id", "memory_id"),)


class UserLeaseRow(Base):
    """A batch job's short claim on one user whose actor is not live: while it holds, activating that user's
    actor waits, so the job may commit under the optimistic lock without a stale engine running beside it."""

    __tablename__ = "user_leases"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ProfileSnapshotRow(Base):
    """The user's slot conclusions at the last consolidation, as digests only (never the values), so the
    next run can tell which conclusions drifted without keeping a second copy of anyone's profile."""

    __tablename__ = "profile_snapshots"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    #: slot name → sha256 prefix of the slot's sorted conclusions
    digests: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    run_id: Mapped[str] = mapped_column(String(64))
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime)


class CohortFeatureRow(Base):
    """A tenant's cohort feature: how many of its users hold one slot value (published only when at least
    the minimum cohort size do, so no feature describes a small, identifiable group)."""

    __tablename__ = "cohort_features"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    slot: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    polarity: Mapped[Polarity] = mapped_column(enum_column(Polarity), primary_key=True)
    value: Mapped[str] = mapped_column(String(512), primary_key=True)
    users: Mapped[int] = mapped_column(Integer)
    cohort_size: Mapped[int] = mapped_column(Integer)
    share: Mapped[float] = mapped_column(Float)
    computed_at: Mapped[datetime] = mapped_column(UTCDateTime)


class JobRunRow(Base):
    """One run of a batch job (consolidate, group-profiles, restore, reindex) and the figures it reported."""

    __tablename__ = "job_runs"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    job: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))  # running | succeeded | failed
    params: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    report: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_job_runs_job_started", "job", "started_at"),)


class UserOwnerRow(Base):
    """Who may commit for a user: the host (or batch job) that last claimed them, and the claim's epoch. Every
    claim raises the epoch; a commit names the epoch it was decided under and is refused if it moved, so a
    host that lost a user (pool resized, host presumed dead, a job took over) can never write for them."""

    __tablename__ = "user_owners"

    tenant_id: Mapped[str] = mapped_column(
        String(TENANT_ID_LENGTH), ForeignKey("tenants.tenant_id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    epoch: Mapped[int] = mapped_column(BigInteger)
    claimed_at: Mapped[datetime] = mapped_column(UTCDateTime)


class IndexOutboxRow(Base):
    """A vector-index operation owed for a committed change, written in the change's own transaction and
    deleted once the index has applied it: the index converges on SQL whatever crashes in between."""

    __tablename__ = "index_outbox"

    seq: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(TENANT_ID_LENGTH))
    user_id: Mapped[str] = mapped_column(String(ID_LENGTH))
    #: NULL with ``op == "delete_user"``
    memory_id: Mapped[str | None] = mapped_column(String(MEMORY_ID_LENGTH))
    op: Mapped[str] = mapped_column(String(16))  # upsert | delete | delete_user
    at: Mapped[datetime] = mapped_column(UTCDateTime)

    __table_args__ = (Index("ix_index_outbox_scope", "tenant_id", "user_id"),)
