"""Forgetting (docs/trust.md#4-erasure): what is removed, what is scrubbed, and the tombstone that is left.

What goes with one item (the summaries that merged it, its words in other items' turn texts) is decided
by ``actors.core.forgetting``; this module removes and rewrites the rows (``Erasure``).

Forgetting one item also drops the user's session snapshots: a snapshot is a rendered cache of memories
and may quote the forgotten content, and privacy wins over prefix-cache stability (the next turn renders a
fresh one). Alerts about the item go too, since their messages may quote it.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, delete, select, update
from sqlalchemy.orm import Session

from actors.core.memory import MemoryItem, utcnow
from actors.store.sql import ownership
from actors.store.sql.database import Database
from actors.store.sql.mapping import item_columns
from actors.store.sql.ownership import Fence
from actors.store.sql.tables import (
    AlertRow,
    AppliedRequestRow,
    AuditEventRow,
    MemoryItemRow,
    ProfileSnapshotRow,
    SessionSnapshotRow,
    TombstoneRow,
)
from schemas.errors import NotFound

REDACTED = {"redacted": True}
_NO_SYNC = {"synchronize_session": False}  # bulk statements on rows this session never loaded

_PER_USER_TABLES = (
    AuditEventRow,
    AlertRow,
    SessionSnapshotRow,
    AppliedRequestRow,
    ProfileSnapshotRow,
    TombstoneRow,
)


def erase_user_rows(session: Session, tenant_id: str, user_id: str, *, reason: str, at: datetime) -> int:
    """Delete every row of one user, leave exactly one tombstone; returns how many items were removed."""
    removed: int = cast(
        CursorResult[Any],
        session.execute(
            delete(MemoryItemRow).where(
                MemoryItemRow.tenant_id == tenant_id, MemoryItemRow.user_id == user_id
            ),
            execution_options=_NO_SYNC,
        ),
    ).rowcount
    for table in _PER_USER_TABLES:
        session.execute(
            delete(table).where(table.tenant_id == tenant_id, table.user_id == user_id),
            execution_options=_NO_SYNC,
        )
    session.add(TombstoneRow(tenant_id=tenant_id, user_id=user_id, memory_id=None, at=at, reason=reason))
    return removed


def forget_item_rows(
    session: Session, tenant_id: str, user_id: str, memory_id: str, *, reason: str, actor: str, at: datetime
) -> None:
    row = session.scalar(
        select(MemoryItemRow).where(
            MemoryItemRow.tenant_id == tenant_id,
            MemoryItemRow.user_id == user_id,
            MemoryItemRow.memory_id == memory_id,
        )
    )
    if row is None:
        raise NotFound(f"memory {memory_id} not found")
    session.delete(row)
    item_events = (
        AuditEventRow.tenant_id == tenant_id,
        AuditEventRow.user_id == user_id,
        AuditEventRow.memory_id == memory_id,
    )
    for payload in (AuditEventRow.before, AuditEventRow.after):
        session.execute(
            update(AuditEventRow).where(*item_events, payload.is_not(None)).values({payload: REDACTED}),
            execution_options=_NO_SYNC,
        )
    session.execute(
        delete(AlertRow).where(
            AlertRow.tenant_id == tenant_id, AlertRow.user_id == user_id, AlertRow.memory_id == memory_id
        ),
        execution_options=_NO_SYNC,
    )
    session.execute(
        delete(SessionSnapshotRow).where(
            SessionSnapshotRow.tenant_id == tenant_id, SessionSnapshotRow.user_id == user_id
        ),
        execution_options=_NO_SYNC,
    )
    session.add(TombstoneRow(tenant_id=tenant_id, user_id=user_id, memory_id=memory_id, at=at, reason=reason))
    session.add(
        AuditEventRow(
            tenant_id=tenant_id,
            user_id=user_id,
            memory_id=memory_id,
            action="forget",
            actor=actor,
            reason=reason,
            before=dict(REDACTED),
            after=None,
            source_dialog_id=None,
            at=at,
        )
    )


def rewrite_turn_texts(session: Session, tenant_id: str, user_id: str, items: Sequence[MemoryItem]) -> None:
    """Store the cut turn text and context (``source_text``, ``context``) of items that stay while a sibling
    is forgotten."""
    for item in items:
        session.execute(
            update(MemoryItemRow)
            .where(
                MemoryItemRow.tenant_id == tenant_id,
                MemoryItemRow.user_id == user_id,
                MemoryItemRow.memory_id == item.memory_id,
            )
            .values(item_columns(item, ("source_text", "context"))),
            execution_options=_NO_SYNC,
        )


class Erasure:
    """Forgetting one item (and what goes with it) or everything about a user, fenced like a commit, each
    followed by a scrub of SQLite's log so the erased text does not linger in it."""

    def __init__(self, database: Database):
        self._database = database

    def erase_user(self, tenant_id: str, user_id: str, *, reason: str, fence: Fence | None = None) -> int:
        """Remove everything stored about the user, leaving one tombstone; returns how many items went."""
        with self._database.writing("erase_user") as session:
            ownership.check_fence(session, tenant_id, user_id, fence)
            removed = erase_user_rows(session, tenant_id, user_id, reason=reason, at=utcnow())
            ownership.stage(session, tenant_id, user_id, "delete_user", [None])
        self._database.scrub()
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
        with self._database.writing("forget_item") as session:
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
        self._database.scrub()
