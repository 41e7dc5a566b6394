"""The alerts a gate decision raised for a human (written by ``Memories.commit``), read here."""

from __future__ import annotations

from sqlalchemy import select

from actors.core.memory import Alert
from actors.store.sql.database import Database
from actors.store.sql.mapping import alert_from_row
from actors.store.sql.tables import AlertRow
from schemas.enums import AlertStatus


class Alerts:
    def __init__(self, database: Database):
        self._database = database

    def find(
        self, tenant_id: str, user_id: str | None = None, status: AlertStatus | None = AlertStatus.OPEN
    ) -> list[Alert]:
        """Newest first. ``user_id=None``: the whole tenant (operator view); ``status=None``: any status."""
        query = select(AlertRow).where(AlertRow.tenant_id == tenant_id)
        if user_id is not None:
            query = query.where(AlertRow.user_id == user_id)
        if status is not None:
            query = query.where(AlertRow.status == AlertStatus(status))
        query = query.order_by(AlertRow.created_at.desc(), AlertRow.alert_id)
        with self._database.reading("alerts") as session:
            return [alert_from_row(row) for row in session.scalars(query)]
