"""One ``GateChanges`` into the database, inside the caller's transaction: items under the optimistic lock,
audit events, alerts and the applied-request record together, all or nothing.

Items are written with Core statements, one executemany for the new rows and one for the changed ones (a
consolidation pass rewrites most of a user's items: row-by-row ORM updates were most of its time). The lock
has two layers. Here, each stored row's version (read ``FOR UPDATE``) must equal the version the caller
loaded the item at (``MemoryItem.version``), or the commit is refused. Then every UPDATE is conditional on
that same version and raises the version by one; a row count short of the batch means a writer slipped in
between, and the commit is refused too (``ConcurrentUpdate``).
"""

from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import CursorResult, Table, bindparam, func, insert, select, update
from sqlalchemy.orm import Session

from actors.core.memory import Alert, AuditEvent, GateChanges, MemoryItem, utcnow
from actors.store.sql.mapping import (
    UPDATABLE_ITEM_FIELDS,
    alert_row,
    event_columns,
    item_columns,
    update_alert_row,
)
from actors.store.sql.tables import (
    AlertRow,
    AppliedRequestRow,
    AuditEventRow,
    MemoryItemRow,
    TenantRow,
    TombstoneRow,
)
from schemas.enums import AlertStatus
from schemas.errors import ConcurrentUpdate, InvalidInput, NotFound
from schemas.ids import check_tenant_id, check_user_id

#: a commit runs Core statements built once, on the tables: the ORM's unit of work and building each
#: statement per call cost more CPU than running them (half of a write's commit, bench_service_cpu.py)
_ITEMS = cast(Table, MemoryItemRow.__table__)
_EVENTS = cast(Table, AuditEventRow.__table__)
_APPLIED = cast(Table, AppliedRequestRow.__table__)
_TENANTS = cast(Table, TenantRow.__table__)
_TOMBSTONES = cast(Table, TombstoneRow.__table__)
#: one UPDATE per changed item, run as one executemany: the key and the version it was loaded at. An item
#: that carries no vector keeps the stored one: a resident user's memory holds each vector once, in its
#: recall rows (``actors.core.recall.vectors``), and its items drop their own copies
_KEPT_UNLESS_GIVEN = ("embedding",)
_UPDATE_ITEM = (
    update(_ITEMS)
    .where(
        _ITEMS.c.tenant_id == bindparam("key_tenant_id"),
        _ITEMS.c.user_id == bindparam("key_user_id"),
        _ITEMS.c.memory_id == bindparam("key_memory_id"),
        _ITEMS.c.version == bindparam("key_version"),
    )
    .values(
        version=_ITEMS.c.version + 1,
        **{
            name: (
                func.coalesce(bindparam(f"set_{name}", type_=_ITEMS.c[name].type), _ITEMS.c[name])
                if name in _KEPT_UNLESS_GIVEN
                else bindparam(f"set_{name}")
            )
            for name in UPDATABLE_ITEM_FIELDS
        },
    )
)

_TENANT = select(_TENANTS.c.tenant_id).where(_TENANTS.c.tenant_id == bindparam("tenant_id"))
_VERSIONS = (
    select(_ITEMS.c.memory_id, _ITEMS.c.version)
    .where(
        _ITEMS.c.tenant_id == bindparam("tenant_id"),
        _ITEMS.c.user_id == bindparam("user_id"),
        _ITEMS.c.memory_id.in_(bindparam("memory_ids", expanding=True)),
    )
    .with_for_update()
)
_FORGOTTEN = (
    select(_TOMBSTONES.c.memory_id)
    .where(
        _TOMBSTONES.c.tenant_id == bindparam("tenant_id"),
        _TOMBSTONES.c.user_id == bindparam("user_id"),
        _TOMBSTONES.c.memory_id.in_(bindparam("memory_ids", expanding=True)),
    )
    .limit(1)
)

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
    if session.scalar(_TENANT, {"tenant_id": tenant_id}) is None:
        raise NotFound(f"tenant {tenant_id!r} does not exist")
    items = list(changes.upserted.values())
    stored = _stored_versions(session, scope, [item.memory_id for item in items])
    new_items = [item for item in items if item.memory_id not in stored]
    if new_items:
        _refuse_forgotten(session, scope, new_items)
    changed = [item for item in items if item.memory_id in stored]
    for item in changed:
        if stored[item.memory_id] != item.version:
            raise ConcurrentUpdate(
                f"memory {item.memory_id} is at version {stored[item.memory_id]}, "
                f"the change was made to {item.version}"
            )
    if new_items:
        session.execute(insert(_ITEMS), [{**item_columns(item), "version": 1} for item in new_items])
    if changed:
        updated = cast(
            CursorResult[Any],
            session.execute(
                _UPDATE_ITEM,
                [
                    {
                        "key_tenant_id": tenant_id,
                        "key_user_id": user_id,
                        "key_memory_id": item.memory_id,
                        "key_version": item.version,
                        **{
                            f"set_{name}": value
                            for name, value in item_columns(item, UPDATABLE_ITEM_FIELDS).items()
                        },
                    }
                    for item in changed
                ],
            ),
        )
        if updated.rowcount not in (-1, len(changed)):
            raise ConcurrentUpdate("commit: a memory was changed concurrently")
    if changes.events:
        session.execute(insert(_EVENTS), [event_columns(event) for event in changes.events])
    _upsert_alerts(session, scope, changes.alerts)
    if request_id is not None:
        row = {"tenant_id": tenant_id, "user_id": user_id, "request_id": request_id}
        session.execute(insert(_APPLIED), [{**row, "result": result or {}, "at": utcnow()}])
    session.flush()
    return {item.memory_id: stored.get(item.memory_id, 0) + 1 for item in items}


def _stored_versions(session: Session, scope: Scope, memory_ids: list[str]) -> dict[str, int]:
    """The stored version of each of these items that exists, its row locked until the commit."""
    if not memory_ids:
        return {}
    tenant_id, user_id = scope
    rows = session.execute(_VERSIONS, {"tenant_id": tenant_id, "user_id": user_id, "memory_ids": memory_ids})
    return {memory_id: version for memory_id, version in rows}


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
    memory_ids = [item.memory_id for item in new_items]
    forgotten = session.scalar(
        _FORGOTTEN, {"tenant_id": tenant_id, "user_id": user_id, "memory_ids": memory_ids}
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
