"""The SQL store: the source of truth of Hermes Memory (SQLite by default, PostgreSQL by URL).

``MemoryStore`` takes and returns the domain records of ``actors.core.memory``. Every query about a user's
memory is scoped by tenant *and* user, with bound parameters only. Errors are those of ``schemas.errors``:
``NotFound``, ``ConcurrentUpdate`` (optimistic lock, retry), ``StoreUnavailable`` (retry later) and
``InvalidInput``. Helpers: ``engine`` (engine, BEGIN mode, error translation), ``mapping`` (rows ↔
records), ``commit`` (one change set, all or nothing), ``forget`` (erasure and tombstones),
``tenants`` (API keys), ``jobs`` (the batch jobs' leases, snapshots, cohort features and runs).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, Self

from sqlalchemy import ColumnElement, Select, func, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from actors.adapters.crypto import seal, snapshot_context, unseal
from actors.core.memory import Alert, AuditEvent, GateChanges, MemoryItem, utcnow
from actors.store.sql import ownership
from actors.store.sql.commit import apply_changes, scope_of
from actors.store.sql.engine import WRITE_OPTION, build_engine, scrub_sqlite_log, translated_errors
from actors.store.sql.forget import erase_user_rows, forget_item_rows, rewrite_turn_texts
from actors.store.sql.jobs import INDEXED, JobRecords
from actors.store.sql.mapping import alert_from_row, event_from_row, item_from_record
from actors.store.sql.ownership import Fence, OutboxEntry
from actors.store.sql.tables import (
    AlertRow,
    ApiKeyRow,
    AppliedRequestRow,
    AuditEventRow,
    MemoryItemRow,
    SessionSnapshotRow,
    TenantRow,
    UserConsentRow,
)
from actors.store.sql.tenants import (
    KeyGrant,
    KeyInfo,
    TenantLimits,
    TenantRecord,
    hash_api_key,
    key_matches,
    new_api_key,
    new_key_id,
    tenant_named_by,
)
from actors.store.sql.transfer import TransferRecords
from schemas.enums import ACTIVE_STATES, HISTORY_STATES, AlertStatus, Layer, State
from schemas.errors import ConcurrentUpdate, InvalidInput, NotFound
from schemas.ids import check_tenant_id, check_user_id
from schemas.settings import GatePolicy, HermesSettings

log = logging.getLogger(__name__)

#: item reads select the table, not the mapped class: plain rows, no identity map
_ITEMS = MemoryItemRow.__table__


def _user_scope(tenant_id: str, user_id: str) -> tuple[ColumnElement[bool], ...]:
    return MemoryItemRow.tenant_id == tenant_id, MemoryItemRow.user_id == user_id


def _filtered(
    query: Select[Any], layers: Iterable[Layer] | None, states: Iterable[State] | None
) -> Select[Any]:
    if layers is not None:
        query = query.where(MemoryItemRow.layer.in_([Layer(layer) for layer in layers]))
    if states is not None:
        query = query.where(MemoryItemRow.state.in_([State(state) for state in states]))
    return query


def _key_info(row: ApiKeyRow) -> KeyInfo:
    return KeyInfo(row.key_id, row.user_id, row.label, row.created_at, row.expires_at)


class MemoryStore:
    def __init__(self, url: str, *, echo: bool = False, default_policy: GatePolicy | None = None):
        self.url = url
        self._engine = build_engine(url, echo=echo)
        #: the policy of tenants without overrides (the service-wide ``HermesSettings.policy``)
        self._default_policy = default_policy or GatePolicy()
        #: the batch jobs' leases, profile digests, cohort features, runs and index bookkeeping
        self.jobs = JobRecords(self._reading, self._writing, self._items)
        #: a user's rows read for export and added by import (``actors.store.sql.transfer``)
        self.transfer = TransferRecords(self._reading, self._writing, self._items, self.refresh_statistics)

    @classmethod
    def from_settings(cls, settings: HermesSettings) -> Self:
        if not settings.sql_url:
            settings.home.mkdir(parents=True, exist_ok=True)
        return cls(settings.resolved_sql_url(), default_policy=settings.policy)

    def create_schema(self) -> None:
        # alembic is slow to import: import it before taking the write lock, not while holding it (on a
        # loaded machine the import alone kept concurrent starters waiting past the busy timeout)
        from actors.store.sql.migrations import upgrade_to_head

        with translated_errors("create_schema"), self._engine.connect() as connection:
            connection = connection.execution_options(**{WRITE_OPTION: True})
            with connection.begin():
                upgrade_to_head(connection)

    def dispose(self) -> None:
        self._engine.dispose()

    @contextmanager
    def _reading(self, operation: str) -> Iterator[Session]:
        with translated_errors(operation), Session(self._engine) as session, session.begin():
            yield session

    def refresh_statistics(self) -> None:
        """Fresh planner statistics of the memory table, after a bulk load (an import, a benchmark's seed)."""
        with self._writing("refresh_statistics") as session:
            session.execute(text("ANALYZE memory_items"))

    @contextmanager
    def _writing(self, operation: str) -> Iterator[Session]:
        write = {WRITE_OPTION: True}
        with translated_errors(operation), Session(self._engine, execution_options=write) as session:
            with session.begin():
                yield session

    # tenants

    def create_tenant(
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
            with self._writing("create_tenant") as session:
                if session.get(TenantRow, tenant_id) is not None:
                    raise InvalidInput(f"tenant {tenant_id!r} already exists")
                session.add(row)
        except IntegrityError as error:  # created concurrently by someone else
            raise InvalidInput(f"tenant {tenant_id!r} already exists") from error
        return api_key

    def authenticate(self, api_key: str) -> KeyGrant | None:
        """What ``api_key`` reaches: its tenant's primary key reaches every user; a further key of the tenant
        (not expired) reaches every user or only the one it is bound to; anything else reaches nothing."""
        tenant_id = tenant_named_by(api_key)
        if tenant_id is None:
            key_matches(api_key, None)  # as slow as a lookup
            return None
        with self._reading("authenticate") as session:
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

    def tenant_policy(self, tenant_id: str) -> GatePolicy:
        overrides = self._tenant_field(tenant_id, TenantRow.policy)
        if not overrides:
            return self._default_policy.model_copy(deep=True)
        return GatePolicy.model_validate(overrides)

    def group_profile_consent(self, tenant_id: str) -> bool:
        return bool(self._tenant_field(tenant_id, TenantRow.group_profile_consent))

    def tenant_limits(self, tenant_id: str) -> TenantLimits:
        with self._reading("tenant_limits") as session:
            columns = select(TenantRow.max_users, TenantRow.requests_per_minute)
            found = session.execute(columns.where(TenantRow.tenant_id == tenant_id)).first()
        if found is None:
            raise NotFound(f"tenant {tenant_id!r} not found")
        return TenantLimits(max_users=found[0], requests_per_minute=found[1])

    def set_tenant_limits(self, tenant_id: str, limits: TenantLimits) -> None:
        with self._writing("set_tenant_limits") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            row.max_users = limits.max_users
            row.requests_per_minute = limits.requests_per_minute

    def tenant_record(self, tenant_id: str) -> TenantRecord:
        with self._reading("tenant_record") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            limits = TenantLimits(max_users=row.max_users, requests_per_minute=row.requests_per_minute)
            return TenantRecord(
                row.tenant_id,
                row.name,
                dict(row.policy or {}),
                row.group_profile_consent,
                limits,
                row.created_at,
            )

    def set_tenant_policy(self, tenant_id: str, policy: GatePolicy) -> None:
        """The tenant's users live under ``policy`` from their next activation on."""
        with self._writing("set_tenant_policy") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            row.policy = policy.model_dump(mode="json")

    def set_group_profile_consent(self, tenant_id: str, consent: bool) -> None:
        with self._writing("set_group_profile_consent") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            row.group_profile_consent = consent

    def user_consent(self, tenant_id: str, user_id: str) -> bool | None:
        """The user's own answer about group profiles; None: not given (the tenant's answer holds)."""
        with self._reading("user_consent") as session:
            row = session.get(UserConsentRow, (tenant_id, user_id))
            return None if row is None else row.group_profiles

    def set_user_consent(self, tenant_id: str, user_id: str, group_profiles: bool) -> None:
        check_user_id(user_id)
        with self._writing("set_user_consent") as session:
            if session.get(TenantRow, tenant_id) is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            row = session.get(UserConsentRow, (tenant_id, user_id))
            if row is None:
                row = UserConsentRow(tenant_id=tenant_id, user_id=user_id)
                session.add(row)
            row.group_profiles, row.updated_at = group_profiles, utcnow()

    def user_usage(self, tenant_id: str, user_id: str) -> tuple[bool, int]:
        """Whether the user holds any item in the tenant, and how many users do (for the user quota)."""
        with self._reading("user_usage") as session:
            exists = session.scalar(
                select(MemoryItemRow.memory_id).where(*_user_scope(tenant_id, user_id)).limit(1)
            )
            distinct_users = func.count(MemoryItemRow.user_id.distinct())
            users = session.scalar(select(distinct_users).where(MemoryItemRow.tenant_id == tenant_id))
        return exists is not None, users or 0

    def tenant_ids(self) -> list[str]:
        with self._reading("tenant_ids") as session:
            return list(session.scalars(select(TenantRow.tenant_id).order_by(TenantRow.tenant_id)))

    def _tenant_field(self, tenant_id: str, column: Any) -> Any:
        with self._reading("tenant") as session:
            found = session.execute(select(column).where(TenantRow.tenant_id == tenant_id)).first()
        if found is None:
            raise NotFound(f"tenant {tenant_id!r} not found")
        return found[0]

    def rotate_key(self, tenant_id: str, overlap_seconds: float = 0.0) -> str:
        """A new primary key for the tenant (returned once). The old one keeps working for
        ``overlap_seconds`` (listed as a tenant-wide key until it expires), so clients can switch over
        without downtime; 0 ends it now."""
        if overlap_seconds < 0:
            raise InvalidInput("overlap_seconds must be >= 0")
        api_key = new_api_key(tenant_id)
        now = utcnow()
        with self._writing("rotate_key") as session:
            row = session.get(TenantRow, tenant_id)
            if row is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
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
        with self._writing("mint_user_key") as session:
            if session.get(TenantRow, tenant_id) is None:
                raise NotFound(f"tenant {tenant_id!r} not found")
            session.add(row)
            info = _key_info(row)
        return info, api_key

    def api_keys(self, tenant_id: str, *, include_expired: bool = False) -> list[KeyInfo]:
        query = select(ApiKeyRow).where(ApiKeyRow.tenant_id == tenant_id)
        with self._reading("api_keys") as session:
            rows = session.scalars(query.order_by(ApiKeyRow.created_at, ApiKeyRow.key_id)).all()
            now = utcnow()
            return [
                _key_info(row)
                for row in rows
                if include_expired or row.expires_at is None or row.expires_at > now
            ]

    def revoke_key(self, tenant_id: str, key_id: str, grace_seconds: float = 0.0) -> KeyInfo:
        """End a further key now, or after ``grace_seconds`` (a key being replaced); an expiry already
        sooner is kept."""
        if grace_seconds < 0:
            raise InvalidInput("grace_seconds must be >= 0")
        ends = utcnow() + timedelta(seconds=grace_seconds)
        with self._writing("revoke_key") as session:
            row = session.get(ApiKeyRow, key_id)
            if row is None or row.tenant_id != tenant_id:
                raise NotFound(f"key {key_id!r} not found")
            if row.expires_at is None or row.expires_at > ends:
                row.expires_at = ends
            return _key_info(row)

    # memory

    def load_active(self, tenant_id: str, user_id: str) -> list[MemoryItem]:
        """Every item that counts against capacity and takes part in recall (active state, not archived)."""
        query = select(_ITEMS).where(
            *_user_scope(tenant_id, user_id),
            MemoryItemRow.state.in_(ACTIVE_STATES),
            MemoryItemRow.layer != Layer.ARCHIVE,
        )
        return self._items("load_active", query.order_by(MemoryItemRow.created_at))

    def _items(self, operation: str, query: Select[Any]) -> list[MemoryItem]:
        with self._reading(operation) as session:
            return [item_from_record(record) for record in session.execute(query).mappings()]

    def get_item(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryItem:
        query = select(_ITEMS).where(*_user_scope(tenant_id, user_id), MemoryItemRow.memory_id == memory_id)
        found = self._items("get_item", query)
        if not found:
            raise NotFound(f"memory {memory_id} not found")
        return found[0]

    def list_items(
        self,
        tenant_id: str,
        user_id: str,
        *,
        layers: Iterable[Layer] | None = None,
        states: Iterable[State] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemoryItem]:
        """Newest first, in a stable order so limit/offset pages neither skip nor repeat items."""
        query = _filtered(select(_ITEMS).where(*_user_scope(tenant_id, user_id)), layers, states)
        query = query.order_by(MemoryItemRow.created_at.desc(), MemoryItemRow.memory_id.desc())
        return self._items("list_items", query.limit(limit).offset(offset))

    def count_items(
        self,
        tenant_id: str,
        user_id: str,
        *,
        layers: Iterable[Layer] | None = None,
        states: Iterable[State] | None = None,
    ) -> int:
        query = select(func.count()).select_from(MemoryItemRow).where(*_user_scope(tenant_id, user_id))
        query = _filtered(query, layers, states)
        with self._reading("count_items") as session:
            return session.scalar(query) or 0

    def find_archived(
        self,
        tenant_id: str,
        user_id: str,
        *,
        content_hash: str | None = None,
        slot: str | None = None,
        memory_ids: Collection[str] | None = None,
        created: tuple[datetime, datetime] | None = None,
        limit: int = 50,
    ) -> list[MemoryItem]:
        """Items in the archive layer, most recently archived first; optionally only those with this content
        hash, slot, one of these ids, or created in ``[start, end)`` — those newest said first: the index on
        (tenant, user, layer, created) then reads only the rows returned, not the user's whole archive."""
        query = select(_ITEMS).where(*_user_scope(tenant_id, user_id), MemoryItemRow.layer == Layer.ARCHIVE)
        if content_hash is not None:
            query = query.where(MemoryItemRow.content_hash == content_hash)
        if slot is not None:
            query = query.where(MemoryItemRow.slot == slot)
        if memory_ids is not None:
            query = query.where(MemoryItemRow.memory_id.in_(list(memory_ids)))
        if created is not None:
            query = query.where(MemoryItemRow.created_at >= created[0], MemoryItemRow.created_at < created[1])
        if created is not None:
            query = query.order_by(MemoryItemRow.created_at.desc(), MemoryItemRow.memory_id)
        else:
            query = query.order_by(MemoryItemRow.archived_at.desc().nulls_last(), MemoryItemRow.memory_id)
        return self._items("find_archived", query.limit(limit))

    def slot_history(self, tenant_id: str, user_id: str, limit: int = 2000) -> list[MemoryItem]:
        """Superseded and expired items that held a slot value, newest first: the profile's history."""
        query = select(_ITEMS).where(
            *_user_scope(tenant_id, user_id),
            MemoryItemRow.state.in_(HISTORY_STATES),
            MemoryItemRow.slot.is_not(None),
        )
        query = query.order_by(MemoryItemRow.updated_at.desc(), MemoryItemRow.memory_id)
        return self._items("slot_history", query.limit(limit))

    def users(self, tenant_id: str) -> list[str]:
        """Users of the tenant that have at least one stored item."""
        query = (
            select(MemoryItemRow.user_id)
            .where(MemoryItemRow.tenant_id == tenant_id)
            .distinct()
            .order_by(MemoryItemRow.user_id)
        )
        with self._reading("users") as session:
            return list(session.scalars(query))

    def commit(
        self,
        changes: GateChanges,
        *,
        request_id: str | None = None,
        result: dict[str, Any] | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        fence: Fence | None = None,
        index_ids: Iterable[str] | None = None,
    ) -> None:
        """Write one change set in one transaction, or nothing of it.

        ``fence``: the committer's claim on the user (``OwnershipLost`` once it is stale). ``index_ids``: the
        upserted items whose vector-index row changed (default: all), staged in the index outbox.

        Every record must belong to one (tenant, user). Raises ``ConcurrentUpdate`` when an item's row moved
        past the version the item was loaded at (or the memory was forgotten meanwhile); on success each
        item's ``version`` is set to its new row version. An empty change set writes nothing — not even its
        ``request_id``, unless ``tenant_id`` and ``user_id`` say whose request it was (replaying a request
        that changed nothing is harmless, so recording it is optional).
        """
        scope = scope_of(changes, tenant_id, user_id)
        if scope is None or (not changes and request_id is None):
            return
        try:
            with self._writing("commit") as session:
                ownership.check_fence(session, *scope, fence)
                versions = apply_changes(session, changes, scope, request_id=request_id, result=result)
                indexed = changes.upserted if index_ids is None else index_ids
                ownership.stage(session, *scope, "upsert", indexed)
        except IntegrityError as error:
            raise ConcurrentUpdate(
                "commit: a memory, alert or request id was written concurrently"
            ) from error
        for item in changes.upserted.values():
            item.version = versions[item.memory_id]

    def applied_result(self, tenant_id: str, user_id: str, request_id: str) -> dict[str, Any] | None:
        query = select(AppliedRequestRow.result).where(
            AppliedRequestRow.tenant_id == tenant_id,
            AppliedRequestRow.user_id == user_id,
            AppliedRequestRow.request_id == request_id,
        )
        with self._reading("applied_result") as session:
            return session.scalar(query)

    def audit_trail(
        self, tenant_id: str, user_id: str, memory_id: str | None = None, limit: int = 200
    ) -> list[AuditEvent]:
        """Newest first."""
        query = select(AuditEventRow).where(
            AuditEventRow.tenant_id == tenant_id, AuditEventRow.user_id == user_id
        )
        if memory_id is not None:
            query = query.where(AuditEventRow.memory_id == memory_id)
        query = query.order_by(AuditEventRow.at.desc(), AuditEventRow.id.desc()).limit(limit)
        with self._reading("audit_trail") as session:
            return [event_from_row(row) for row in session.scalars(query)]

    def alerts(
        self, tenant_id: str, user_id: str | None = None, status: AlertStatus | None = AlertStatus.OPEN
    ) -> list[Alert]:
        """Newest first. ``user_id=None``: the whole tenant (operator view); ``status=None``: any status."""
        query = select(AlertRow).where(AlertRow.tenant_id == tenant_id)
        if user_id is not None:
            query = query.where(AlertRow.user_id == user_id)
        if status is not None:
            query = query.where(AlertRow.status == AlertStatus(status))
        query = query.order_by(AlertRow.created_at.desc(), AlertRow.alert_id)
        with self._reading("alerts") as session:
            return [alert_from_row(row) for row in session.scalars(query)]

    def session_snapshot(self, tenant_id: str, user_id: str, session_id: str) -> str | None:
        with self._reading("session_snapshot") as session:
            row = session.get(SessionSnapshotRow, (tenant_id, user_id, session_id))
            stored = None if row is None else row.text
        return unseal(stored, snapshot_context(tenant_id, user_id, session_id))

    def save_session_snapshot(self, tenant_id: str, user_id: str, session_id: str, text: str) -> str:
        """First writer wins: returns the text stored for the session, which may be another caller's."""
        try:
            with self._writing("save_session_snapshot") as session:
                stored = session.get(SessionSnapshotRow, (tenant_id, user_id, session_id))
                if stored is not None:
                    return unseal(stored.text, snapshot_context(tenant_id, user_id, session_id))
                session.add(
                    SessionSnapshotRow(
                        tenant_id=tenant_id,
                        user_id=user_id,
                        session_id=session_id,
                        text=seal(text, snapshot_context(tenant_id, user_id, session_id)),
                        created_at=utcnow(),
                    )
                )
            return text
        except IntegrityError as error:  # lost the race to another writer, or the tenant does not exist
            winner = self.session_snapshot(tenant_id, user_id, session_id)
            if winner is None:
                raise NotFound(f"tenant {tenant_id!r} not found") from error
            return winner

    # forgetting

    def erase_user(self, tenant_id: str, user_id: str, *, reason: str, fence: Fence | None = None) -> int:
        """Remove everything stored about the user, leaving one tombstone; returns how many items went."""
        with self._writing("erase_user") as session:
            ownership.check_fence(session, tenant_id, user_id, fence)
            removed = erase_user_rows(session, tenant_id, user_id, reason=reason, at=utcnow())
            ownership.stage(session, tenant_id, user_id, "delete_user", [None])
        self._scrub()
        return removed

    def forget_item(
        self,
        tenant_id: str,
        user_id: str,
        memory_id: str,
        *,
        reason: str,
        actor: str,
        fence: Fence | None = None,
        also: Sequence[str] = (),
        rewritten: Sequence[MemoryItem] = (),
    ) -> None:
        """Forget one item and ``also`` those that go with it (``actors.core.forgetting``), and store the
        cut turn texts of the ``rewritten`` items, in one transaction; then scrub SQLite's log."""
        at = utcnow()
        with self._writing("forget_item") as session:
            ownership.check_fence(session, tenant_id, user_id, fence)
            forget_item_rows(session, tenant_id, user_id, memory_id, reason=reason, actor=actor, at=at)
            for other in also:
                forget_item_rows(
                    session,
                    tenant_id,
                    user_id,
                    other,
                    reason=f"with {memory_id}: {reason}",
                    actor=actor,
                    at=at,
                )
            rewrite_turn_texts(session, tenant_id, user_id, rewritten)
            ownership.stage(session, tenant_id, user_id, "delete", [memory_id, *also])
        self._scrub()

    # the host runtime: ownership and the index outbox

    def claim_user(self, tenant_id: str, user_id: str, owner: str) -> Fence:
        with self._writing("claim_user") as session:
            return ownership.claim(session, tenant_id, user_id, owner)

    def user_epoch(self, tenant_id: str, user_id: str) -> int:
        with self._reading("user_epoch") as session:
            return ownership.current_epoch(session, tenant_id, user_id)

    def outbox_pending(self, limit: int, after: int = 0) -> list[OutboxEntry]:
        with self._reading("outbox_pending") as session:
            return ownership.pending(session, limit, after)

    def outbox_done(self, seqs: list[int]) -> None:
        with self._writing("outbox_done") as session:
            ownership.done(session, seqs)

    def indexable(self, tenant_id: str, memory_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The index rows (id, user, layer, state, embedding) of those items that belong in the index."""
        row = MemoryItemRow
        query = select(row.memory_id, row.user_id, row.layer, row.state, row.embedding).where(
            row.tenant_id == tenant_id, row.memory_id.in_(list(memory_ids)), INDEXED
        )
        with self._reading("indexable") as session:
            return [dict(found) for found in session.execute(query).mappings()]

    def _scrub(self) -> None:
        with translated_errors("scrub"):
            if not scrub_sqlite_log(self._engine):
                log.warning("SQLite's log could not be scrubbed within the busy timeout; the next scrub will")
