"""Domain records (``actors.core.memory``) to table rows (``actors.store.sql.tables``) and back.

Lists are copied on the way in, so a caller mutating a domain item never mutates ORM state; items read
back are built from plain result rows whose lists are freshly decoded. Texts that carry content (an item's
``content`` and ``value``, audit payloads) are sealed on the way in and opened on the way out when
encryption at rest is on (``actors.adapters.crypto``).
"""

import sys
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from actors.adapters.crypto import audit_context, item_context, seal, seal_json, unseal, unseal_json
from actors.core.memory import Alert, AuditEvent, MemoryItem
from actors.store.sql.tables import AlertRow, AuditEventRow

ITEM_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(MemoryItem))
#: what an UPDATE may change: the id is the key, the version belongs to the optimistic lock
UPDATABLE_ITEM_FIELDS = tuple(name for name in ITEM_FIELDS if name not in ("memory_id", "version"))
_ALERT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Alert))
_EVENT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AuditEvent))
#: item fields holding what the user said
_SEALED_ITEM_FIELDS = ("content", "value", "source_text", "context")
_SEALED_EVENT_FIELDS = ("before", "after")
_SHARED_ID_FIELDS = (
    "tenant_id",
    "user_id",
    "slot",
    "source_session_id",
    "source_dialog_ids",
    "confirmed_sessions",
)


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


def _item_column(item: MemoryItem, name: str) -> object:
    value = getattr(item, name)
    return seal(value, item_context(item.memory_id, name)) if name in _SEALED_ITEM_FIELDS else _copied(value)


def _event_column(event: AuditEvent, name: str) -> object:
    value = getattr(event, name)
    if name in _SEALED_EVENT_FIELDS:
        return seal_json(value, audit_context(event.tenant_id, event.user_id, event.memory_id))
    return value


def _interned(value: Any) -> Any:
    if isinstance(value, str):
        return sys.intern(value)
    return tuple(map(sys.intern, value)) if isinstance(value, list) else value


def item_from_record(record: Mapping[Any, Any]) -> MemoryItem:
    """From a Core result row of ``memory_items`` (reads skip the ORM: ~40% faster to load a user). The ids
    a user's items share (tenant, user, slot, sessions and dialog turns) are interned: a resident user holds
    each once, not once per item."""
    values = {name: record[name] for name in ITEM_FIELDS}
    for name in _SHARED_ID_FIELDS:
        values[name] = _interned(values[name])
    for name in _SEALED_ITEM_FIELDS:
        values[name] = unseal(values[name], item_context(values["memory_id"], name))
    return MemoryItem(**values)


def item_columns(item: MemoryItem, names: tuple[str, ...] = UPDATABLE_ITEM_FIELDS + ("memory_id",)) -> dict:
    """Column values of an item's row (the version is the commit's business)."""
    return {name: _item_column(item, name) for name in names}


def event_columns(event: AuditEvent) -> dict[str, object]:
    """Column values of an event's row (its id is the database's)."""
    return {name: _event_column(event, name) for name in _EVENT_FIELDS}


def event_from_row(row: AuditEventRow) -> AuditEvent:
    values = {name: getattr(row, name) for name in _EVENT_FIELDS}
    context = audit_context(row.tenant_id, row.user_id, row.memory_id)
    for name in _SEALED_EVENT_FIELDS:
        values[name] = unseal_json(values[name], context)
    return AuditEvent(**values)


def alert_row(alert: Alert) -> AlertRow:
    return AlertRow(**{name: _copied(getattr(alert, name)) for name in _ALERT_FIELDS})


def update_alert_row(row: AlertRow, alert: Alert) -> None:
    for name in ("kind", "memory_id", "message", "related_ids", "status"):
        setattr(row, name, _copied(getattr(alert, name)))


def alert_from_row(row: AlertRow) -> Alert:
    return Alert(**{name: _copied(getattr(row, name)) for name in _ALERT_FIELDS})
