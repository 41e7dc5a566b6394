"""The audit trail: every change of a user's memory as an event (written by ``Memories.commit``)."""

from __future__ import annotations

from sqlalchemy import select

from actors.core.memory import AuditEvent
from actors.store.sql.database import Database
from actors.store.sql.mapping import event_from_row
from actors.store.sql.tables import AuditEventRow


class AuditTrail:
    def __init__(self, database: Database):
        self._database = database

    def events(
        self, tenant_id: str, user_id: str, memory_id: str | None = None, limit: int = 200
    ) -> list[AuditEvent]:
        """The user's events (only those of ``memory_id`` when given), newest first."""
        query = select(AuditEventRow).where(
            AuditEventRow.tenant_id == tenant_id, AuditEventRow.user_id == user_id
        )
        if memory_id is not None:
            query = query.where(AuditEventRow.memory_id == memory_id)
        query = query.order_by(AuditEventRow.at.desc(), AuditEventRow.id.desc()).limit(limit)
        with self._database.reading("audit_trail") as session:
            return [event_from_row(row) for row in session.scalars(query)]
