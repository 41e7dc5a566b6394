"""One ``GateChanges`` into the database, inside the caller's transaction: items under the optimistic lock,
audit events, alerts and the applied-request record together, all or nothing.

The lock has two layers. Here, each stored row's version must equal the version the caller loaded the item
at (``MemoryItem.version``), or the commit is refused. Then the mapper's ``version_id_col`` makes every
UPDATE conditional on that same version, which catches a writer that committed between our read and our
write (the ORM raises ``StaleDataError``; ``sql_engine.translated_errors`` turns it into
``ConcurrentUpdate``).
"""

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from actors.errors import ConcurrentUpdate, InvalidInput, NotFound
from actors.memory import Alert, AuditEvent, GateChanges, MemoryItem, utcnow
from actors.store.sql_mapping import alert_row, event_row, new_item_row, update_alert_row, update_item_row
from schemas.enums import AlertStatus
from schemas.ids import check_tenant_id, check_user_id
from schemas.tables import AlertRow, AppliedRequestRow, MemoryItemRow, TenantRow, TombstoneRow

Scope = tuple[str, str]


def scope_of(changes: GateChanges, tenant_id: str | None, user_id: str | None) -> Scope | None:
    """The one (tenant, user) every record of the change set belongs to; None for an unscoped empty set."""
    records: list[MemoryItem | AuditEvent | Alert] = [
        *changes.upserted.values(),
        *changes.events,
        *changes.alerts,
    ]
    scopes = {(record.tenant_id, record.user_id) for record in records}
    if tenant_id is not None or user_id is not None:
        if tenant_id is None or user_id is None:
            raise InvalidInput("commit: give both tenant_id and user_id, or neither")
        scopes.add((tenant_id, user_id))
    if len(scopes) > 1:
        raise InvalidInput(f"commit: one change set spans {len(scopes)} users; commit each user separately")
    if not scopes:
        return None
    scope = scopes.pop()
    check_tenant_id(scope[0])
    check_user_id(scope[1])
    return scope


def apply_changes(
    session: Session,
    changes: GateChanges,
    scope: Scope,
    *,
    request_id: str | None,
    result: dict[str, Any] | None,
) -> dict[str, int]:
    """Stage every change and flush; returns each upserted item's new row version by memory id."""
    tenant_id, user_id = scope
    if session.get(TenantRow, tenant_id) is None:
        raise NotFound(f"tenant {tenant_id!r} does not exist")
    items = list(changes.upserted.values())
    stored = _stored_rows(session, scope, [item.memory_id for item in items])
    new_items = [item for item in items if item.memory_id not in stored]
    if new_items:
        _refuse_forgotten(session, scope, new_items)
    rows: dict[str, MemoryItemRow] = {}
    for item in items:
        row = stored.get(item.memory_id)
        if row is None:
            row = new_item_row(item)
            session.add(row)
        elif row.version != item.version:
            raise ConcurrentUpdate(
                f"memory {item.memory_id} is at version {row.version}, the change was made to {item.version}"
            )
        else:
            update_item_row(row, item)
        rows[item.memory_id] = row
    session.add_all([event_row(event) for event in changes.events])
    _upsert_alerts(session, scope, changes.alerts)
    if request_id is not None:
        session.add(
            AppliedRequestRow(
                tenant_id=tenant_id, user_id=user_id, request_id=request_id, result=result or {}, at=utcnow()
            )
        )
    session.flush()
    return {memory_id: row.version for memory_id, row in rows.items()}


def _stored_rows(session: Session, scope: Scope, memory_ids: list[str]) -> dict[str, MemoryItemRow]:
    if not memory_ids:
        return {}
    tenant_id, user_id = scope
    rows = session.scalars(
        select(MemoryItemRow).where(
            MemoryItemRow.tenant_id == tenant_id,
            MemoryItemRow.user_id == user_id,
            MemoryItemRow.memory_id.in_(memory_ids),
        )
    )
    return {row.memory_id: row for row in rows}


def _refuse_forgotten(session: Session, scope: Scope, new_items: Iterable[MemoryItem]) -> None:
    """A stale in-memory copy must not resurrect what was forgotten. An item missing from the table is new
    only if it was never stored: a version above 1 proves a row existed (and was erased since), and a
    tombstone with its id proves it was forgotten. Either way the caller must reload and retry."""
    new_items = list(new_items)
    for item in new_items:
        if item.version > 1:
            raise ConcurrentUpdate(
                f"memory {item.memory_id} was stored at version {item.version} and is gone"
            )
    tenant_id, user_id = scope
    forgotten = session.scalar(
        select(TombstoneRow.memory_id)
        .where(
            TombstoneRow.tenant_id == tenant_id,
            TombstoneRow.user_id == user_id,
            TombstoneRow.memory_id.in_([item.memory_id for item in new_items]),
        )
        .limit(1)
    )
    if forgotten is not None:
        raise ConcurrentUpdate(f"memory {forgotten} was forgotten; reload before writing")


def _upsert_alerts(session: Session, scope: Scope, alerts: list[Alert]) -> None:
    if not alerts:
        return
    tenant_id, user_id = scope
    stored = {
        row.alert_id: row
        for row in session.scalars(
            select(AlertRow).where(
                AlertRow.tenant_id == tenant_id,
                AlertRow.user_id == user_id,
                AlertRow.alert_id.in_([alert.alert_id for alert in alerts]),
            )
        )
    }
    for alert in alerts:
        row = stored.get(alert.alert_id)
        if row is None:
            row = alert_row(alert)
            session.add(row)
        else:
            update_alert_row(row, alert)
        if alert.status is AlertStatus.RESOLVED:
            row.resolved_at = row.resolved_at or utcnow()
        else:
            row.resolved_at = None
