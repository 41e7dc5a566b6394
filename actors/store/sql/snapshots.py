"""Session snapshots: the context rendered at a session's start, stored sealed so every later turn of the
session gets the same text (a stable prompt prefix). Forgetting an item drops the user's snapshots
(``actors.store.sql.forget``)."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from actors.adapters.crypto import seal, snapshot_context, unseal
from actors.core.memory import utcnow
from actors.store.sql.database import Database
from actors.store.sql.tables import SessionSnapshotRow
from schemas.errors import NotFound


class SessionSnapshots:
    def __init__(self, database: Database):
        self._database = database

    def get(self, tenant_id: str, user_id: str, session_id: str) -> str | None:
        with self._database.reading("session_snapshot") as session:
            row = session.get(SessionSnapshotRow, (tenant_id, user_id, session_id))
            stored = None if row is None else row.text
        return unseal(stored, snapshot_context(tenant_id, user_id, session_id))

    def save(self, tenant_id: str, user_id: str, session_id: str, text: str) -> str:
        """First writer wins: returns the text stored for the session, which may be another caller's."""
        try:
            with self._database.writing("save_session_snapshot") as session:
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
            winner = self.get(tenant_id, user_id, session_id)
            if winner is None:
                raise NotFound(f"tenant {tenant_id!r} not found") from error
            return winner
