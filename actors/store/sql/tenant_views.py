"""Tenant-wide queries for operators (the web console, through ``actors.app.tenant_view``): which users a
tenant has and how full each user's memory is, and the items the operator's search found.

``TenantViews`` (``MemoryStore.views``) holds these read-only queries; like every store query they are scoped
by the caller's tenant and use bound parameters only (a search string is matched with ``LIKE`` under escaping,
so ``%`` and ``_`` in it match themselves).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from actors.core.memory import MemoryItem
from actors.store.sql.database import Database
from actors.store.sql.mapping import item_from_record
from actors.store.sql.tables import AlertRow, MemoryItemRow
from schemas.enums import ACTIVE_STATES, AlertStatus, Layer, State


@dataclass(slots=True)
class UserCounts:
    """One user's items: active ones per tier (what counts against capacity), archived ones, frozen ones."""

    user_id: str
    active: dict[Layer, int] = field(default_factory=dict)
    archived: int = 0
    frozen: int = 0
    open_alerts: int = 0
    last_write_at: datetime | None = None


class TenantViews:
    def __init__(self, database: Database):
        self._database = database

    def user_counts(
        self, tenant_id: str, *, query: str = "", limit: int = 50
    ) -> tuple[list[UserCounts], bool]:
        """Users holding at least one item whose id contains ``query`` (case-insensitive), by user id; and
        whether more than ``limit`` matched."""
        users = select(MemoryItemRow.user_id).where(MemoryItemRow.tenant_id == tenant_id)
        if query:
            users = users.where(func.lower(MemoryItemRow.user_id).contains(query.lower(), autoescape=True))
        users = users.distinct().order_by(MemoryItemRow.user_id).limit(limit + 1)
        with self._database.reading("user_counts") as session:
            found = list(session.scalars(users))
            page = found[:limit]
            counts = self._counts(session, tenant_id, page)
        return [counts[user_id] for user_id in page], len(found) > limit

    def counts_of(self, tenant_id: str, user_id: str) -> UserCounts:
        """One user's counts (all zero for a user without items: reading never creates a user)."""
        with self._database.reading("counts_of") as session:
            return self._counts(session, tenant_id, [user_id])[user_id]

    @staticmethod
    def _counts(session: Session, tenant_id: str, user_ids: list[str]) -> dict[str, UserCounts]:
        counts = {user_id: UserCounts(user_id) for user_id in user_ids}
        if not user_ids:
            return counts
        items = (
            select(
                MemoryItemRow.user_id,
                MemoryItemRow.layer,
                MemoryItemRow.state,
                func.count(),
                func.max(MemoryItemRow.updated_at),
            )
            .where(MemoryItemRow.tenant_id == tenant_id, MemoryItemRow.user_id.in_(user_ids))
            .group_by(MemoryItemRow.user_id, MemoryItemRow.layer, MemoryItemRow.state)
        )
        for user_id, layer, state, n, last in session.execute(items):
            user = counts[user_id]
            if layer is Layer.ARCHIVE:
                user.archived += n
            elif state in ACTIVE_STATES:
                user.active[layer] = user.active.get(layer, 0) + n
            if state is State.FROZEN:
                user.frozen += n
            if last is not None and (user.last_write_at is None or last > user.last_write_at):
                user.last_write_at = last
        alerts = (
            select(AlertRow.user_id, func.count())
            .where(
                AlertRow.tenant_id == tenant_id,
                AlertRow.user_id.in_(user_ids),
                AlertRow.status == AlertStatus.OPEN,
            )
            .group_by(AlertRow.user_id)
        )
        for user_id, n in session.execute(alerts):
            counts[user_id].open_alerts = n
        return counts

    def tenant_items(self, tenant_id: str, memory_ids: Collection[str]) -> list[MemoryItem]:
        """The tenant's items with these ids, whichever user holds them (the operator's search reads its
        hits back here: only what SQL still holds, in the tenant asked about)."""
        if not memory_ids:
            return []
        query = select(MemoryItemRow.__table__).where(
            MemoryItemRow.tenant_id == tenant_id, MemoryItemRow.memory_id.in_(list(memory_ids))
        )
        with self._database.reading("tenant_items") as session:
            return [item_from_record(record) for record in session.execute(query).mappings()]
