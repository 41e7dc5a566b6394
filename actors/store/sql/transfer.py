"""Export and import of a user's rows (``MemoryStore.transfer``; docs/export.md): read in pages for a
streamed export, and written in one fenced transaction per batch on import.

An import adds what is not there yet and changes nothing that is: a memory whose id is stored is left as it
is, one whose id has a tombstone here stays forgotten, an audit event equal in every field to a stored one
is not added twice, an alert whose id is stored is kept, a tombstone already recorded is not recorded
again. So importing the same file twice, or a file cut in parts, gives the same rows as importing it once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select, union
from sqlalchemy.orm import Session

from actors.core.memory import Alert, AuditEvent, GateChanges, MemoryItem
from actors.store.sql import ownership
from actors.store.sql.commit import apply_changes
from actors.store.sql.database import Database
from actors.store.sql.mapping import alert_from_row, event_from_row
from actors.store.sql.ownership import Fence
from actors.store.sql.tables import AlertRow, AuditEventRow, MemoryItemRow, TombstoneRow
from schemas.errors import InvalidInput

_ITEMS = MemoryItemRow.__table__


#: an import batch this large refreshes the planner's statistics: before autovacuum gets to a table that a
#: bulk import filled, PostgreSQL took it for nearly empty and read 40 archived items by id through a user's
#: whole archive (14.6 s against 0.1 ms with fresh statistics, docs/benchmarks.md)
BULK_ROWS = 500


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What forgetting left: ``memory_id`` None when the whole user was erased."""

    tenant_id: str
    user_id: str
    memory_id: str | None
    at: datetime
    reason: str


@dataclass(slots=True)
class ImportBatch:
    """One user's records to add (each already scoped to that user)."""

    tombstones: list[Tombstone] = field(default_factory=list)
    items: list[MemoryItem] = field(default_factory=list)
    events: list[AuditEvent] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)


@dataclass(slots=True)
class ImportCounts:
    memories_added: int = 0
    memories_present: int = 0
    memories_forgotten: int = 0
    events_added: int = 0
    alerts_added: int = 0
    tombstones_added: int = 0
    #: the items that were added (to index and to load)
    added: list[MemoryItem] = field(default_factory=list)


def _event_key(event: AuditEvent) -> tuple[Any, ...]:
    return (
        event.memory_id,
        event.action,
        event.actor,
        event.reason,
        repr(event.before),
        repr(event.after),
        event.source_dialog_id,
        event.at,
    )


class TransferRecords:
    """Held by ``MemoryStore`` as ``store.transfer``."""

    def __init__(self, database: Database):
        self._database = database

    # --------------------------------------------------------------------------------------- export

    def users(self, tenant_id: str) -> list[str]:
        """Users with a stored item or a tombstone (an erased user's erasure is exported too)."""
        query = union(
            select(MemoryItemRow.user_id).where(MemoryItemRow.tenant_id == tenant_id),
            select(TombstoneRow.user_id).where(TombstoneRow.tenant_id == tenant_id),
        )
        with self._database.reading("export_users") as session:
            return sorted(set(session.scalars(query)))

    def tombstones(self, tenant_id: str, user_id: str) -> list[Tombstone]:
        query = (
            select(TombstoneRow)
            .where(TombstoneRow.tenant_id == tenant_id, TombstoneRow.user_id == user_id)
            .order_by(TombstoneRow.at, TombstoneRow.id)
        )
        with self._database.reading("export_tombstones") as session:
            return [
                Tombstone(row.tenant_id, row.user_id, row.memory_id, row.at, row.reason)
                for row in session.scalars(query)
            ]

    def items_after(self, tenant_id: str, user_id: str, after: str, limit: int) -> list[MemoryItem]:
        """Every stored item of the user (any state), by memory id, the first ``limit`` after ``after``."""
        query = (
            select(_ITEMS)
            .where(
                MemoryItemRow.tenant_id == tenant_id,
                MemoryItemRow.user_id == user_id,
                MemoryItemRow.memory_id > after,
            )
            .order_by(MemoryItemRow.memory_id)
            .limit(limit)
        )
        return self._database.items("export_items", query)

    def events_after(
        self, tenant_id: str, user_id: str, after: int, limit: int
    ) -> list[tuple[int, AuditEvent]]:
        """The user's audit events in the order they were written, with their row ids, after ``after``."""
        query = (
            select(AuditEventRow)
            .where(
                AuditEventRow.tenant_id == tenant_id,
                AuditEventRow.user_id == user_id,
                AuditEventRow.id > after,
            )
            .order_by(AuditEventRow.id)
            .limit(limit)
        )
        with self._database.reading("export_events") as session:
            return [(row.id, event_from_row(row)) for row in session.scalars(query)]

    def alerts(self, tenant_id: str, user_id: str) -> list[Alert]:
        query = (
            select(AlertRow)
            .where(AlertRow.tenant_id == tenant_id, AlertRow.user_id == user_id)
            .order_by(AlertRow.created_at, AlertRow.alert_id)
        )
        with self._database.reading("export_alerts") as session:
            return [alert_from_row(row) for row in session.scalars(query)]

    # --------------------------------------------------------------------------------------- import

    def add(self, tenant_id: str, user_id: str, batch: ImportBatch, *, fence: Fence | None) -> ImportCounts:
        """Add what of ``batch`` is not there yet, in one transaction under ``fence``; the added items are
        staged in the vector-index outbox."""
        counts = ImportCounts()
        scope = (tenant_id, user_id)
        with self._database.writing("import") as session:
            ownership.check_fence(session, tenant_id, user_id, fence)
            forgotten = self._tombstone_ids(session, tenant_id, user_id, batch.tombstones, counts)
            stored = self._stored_ids(session, tenant_id, user_id, [item.memory_id for item in batch.items])
            changes = GateChanges()
            for item in batch.items:
                if item.memory_id in forgotten:
                    counts.memories_forgotten += 1
                elif item.memory_id in stored or item.memory_id in changes.upserted:
                    counts.memories_present += 1
                else:
                    item.version = 1
                    changes.upserted[item.memory_id] = item
            known_events = {_event_key(event) for _, event in self._all_events(session, tenant_id, user_id)}
            for event in batch.events:
                if _event_key(event) not in known_events:
                    known_events.add(_event_key(event))
                    changes.events.append(event)
            stored_alerts = self._stored_alerts(
                session, tenant_id, [alert.alert_id for alert in batch.alerts]
            )
            changes.alerts = [alert for alert in batch.alerts if alert.alert_id not in stored_alerts]
            changes.alerts = list({alert.alert_id: alert for alert in changes.alerts}.values())
            apply_changes(session, changes, scope, request_id=None, result=None)
            ownership.stage(session, tenant_id, user_id, "upsert", changes.upserted)
        counts.memories_added = len(changes.upserted)
        if counts.memories_added >= BULK_ROWS:
            self._database.refresh_statistics()
        counts.events_added = len(changes.events)
        counts.alerts_added = len(changes.alerts)
        counts.added = list(changes.upserted.values())
        return counts

    @staticmethod
    def _tombstone_ids(
        session: Session, tenant_id: str, user_id: str, new: Iterable[Tombstone], counts: ImportCounts
    ) -> set[str]:
        """Record the tombstones not recorded yet; every memory id forgotten here, old and new."""
        rows = session.scalars(
            select(TombstoneRow).where(TombstoneRow.tenant_id == tenant_id, TombstoneRow.user_id == user_id)
        ).all()
        recorded = {(row.memory_id, row.at, row.reason) for row in rows}
        for tombstone in new:
            key = (tombstone.memory_id, tombstone.at, tombstone.reason)
            if key not in recorded:
                recorded.add(key)
                session.add(
                    TombstoneRow(
                        tenant_id=tenant_id,
                        user_id=user_id,
                        memory_id=tombstone.memory_id,
                        at=tombstone.at,
                        reason=tombstone.reason,
                    )
                )
                counts.tombstones_added += 1
        return {memory_id for memory_id, _, _ in recorded if memory_id is not None}

    @staticmethod
    def _stored_ids(session: Session, tenant_id: str, user_id: str, memory_ids: list[str]) -> set[str]:
        """Which of these ids this user holds; an id held by anyone else refuses the batch (memory ids are
        unique across the store, and an import never takes another user's row)."""
        if not memory_ids:
            return set()
        query = select(MemoryItemRow.memory_id, MemoryItemRow.tenant_id, MemoryItemRow.user_id).where(
            MemoryItemRow.memory_id.in_(memory_ids)
        )
        stored = set()
        for memory_id, owner_tenant, owner_user in session.execute(query):
            if (owner_tenant, owner_user) != (tenant_id, user_id):
                raise InvalidInput(
                    f"memory {memory_id} is stored for another user here: import into the user it was "
                    "exported from, or into a fresh store"
                )
            stored.add(memory_id)
        return stored

    @staticmethod
    def _stored_alerts(session: Session, tenant_id: str, alert_ids: list[str]) -> set[str]:
        # alert ids are primary keys across tenants: one stored anywhere is not written again
        if not alert_ids:
            return set()
        return set(session.scalars(select(AlertRow.alert_id).where(AlertRow.alert_id.in_(alert_ids))))

    @staticmethod
    def _all_events(session: Session, tenant_id: str, user_id: str) -> list[tuple[int, AuditEvent]]:
        query = select(AuditEventRow).where(
            AuditEventRow.tenant_id == tenant_id, AuditEventRow.user_id == user_id
        )
        return [(row.id, event_from_row(row)) for row in session.scalars(query)]
