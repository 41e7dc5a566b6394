"""A user's memories: the items read for activation, the API and the profile, and the change set a gate
decision commits (items, audit events, alerts and the request's result, all or nothing).

Every query is scoped by tenant *and* user, with bound parameters only. ``commit`` raises
``ConcurrentUpdate`` (optimistic lock, retry) and ``OwnershipLost`` (a stale fence); reads raise
``NotFound`` for a missing item.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlalchemy.exc import IntegrityError

from actors.core.memory import GateChanges, MemoryItem
from actors.store.sql import ownership
from actors.store.sql.commit import apply_changes, scope_of
from actors.store.sql.database import Database
from actors.store.sql.ownership import Fence
from actors.store.sql.tables import AppliedRequestRow, MemoryItemRow
from schemas.enums import ACTIVE_STATES, HISTORY_STATES, Layer, State
from schemas.errors import ConcurrentUpdate, NotFound

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


class Memories:
    def __init__(self, database: Database):
        self._database = database

    # ---------------------------------------------------------------------------------------- reads

    def load_active(self, tenant_id: str, user_id: str) -> list[MemoryItem]:
        """Every item that counts against capacity and takes part in recall (active state, not archived)."""
        query = select(_ITEMS).where(
            *_user_scope(tenant_id, user_id),
            MemoryItemRow.state.in_(ACTIVE_STATES),
            MemoryItemRow.layer != Layer.ARCHIVE,
        )
        return self._database.items("load_active", query.order_by(MemoryItemRow.created_at))

    def get(self, tenant_id: str, user_id: str, memory_id: str) -> MemoryItem:
        query = select(_ITEMS).where(*_user_scope(tenant_id, user_id), MemoryItemRow.memory_id == memory_id)
        found = self._database.items("get_item", query)
        if not found:
            raise NotFound(f"memory {memory_id} not found")
        return found[0]

    def page(
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
        return self._database.items("list_items", query.limit(limit).offset(offset))

    def count(
        self,
        tenant_id: str,
        user_id: str,
        *,
        layers: Iterable[Layer] | None = None,
        states: Iterable[State] | None = None,
    ) -> int:
        query = select(func.count()).select_from(MemoryItemRow).where(*_user_scope(tenant_id, user_id))
        query = _filtered(query, layers, states)
        with self._database.reading("count_items") as session:
            return session.scalar(query) or 0

    def archived(
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
            query = query.order_by(MemoryItemRow.created_at.desc(), MemoryItemRow.memory_id)
        else:
            query = query.order_by(MemoryItemRow.archived_at.desc().nulls_last(), MemoryItemRow.memory_id)
        return self._database.items("find_archived", query.limit(limit))

    def slot_history(self, tenant_id: str, user_id: str, limit: int = 2000) -> list[MemoryItem]:
        """Superseded and expired items that held a slot value, newest first: the profile's history."""
        query = select(_ITEMS).where(
            *_user_scope(tenant_id, user_id),
            MemoryItemRow.state.in_(HISTORY_STATES),
            MemoryItemRow.slot.is_not(None),
        )
        query = query.order_by(MemoryItemRow.updated_at.desc(), MemoryItemRow.memory_id)
        return self._database.items("slot_history", query.limit(limit))

    def users(self, tenant_id: str) -> list[str]:
        """Users of the tenant that have at least one stored item."""
        query = (
            select(MemoryItemRow.user_id)
            .where(MemoryItemRow.tenant_id == tenant_id)
            .distinct()
            .order_by(MemoryItemRow.user_id)
        )
        with self._database.reading("users") as session:
            return list(session.scalars(query))

    def usage(self, tenant_id: str, user_id: str) -> tuple[bool, int]:
        """Whether the user holds any item in the tenant, and how many users do (for the user quota)."""
        with self._database.reading("user_usage") as session:
            exists = session.scalar(
                select(MemoryItemRow.memory_id).where(*_user_scope(tenant_id, user_id)).limit(1)
            )
            distinct_users = func.count(MemoryItemRow.user_id.distinct())
            users = session.scalar(select(distinct_users).where(MemoryItemRow.tenant_id == tenant_id))
        return exists is not None, users or 0

    # -------------------------------------------------------------------------------------- changes

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
            with self._database.writing("commit") as session:
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
        """The stored answer of a request already applied (a retried write answers it again), else None."""
        query = select(AppliedRequestRow.result).where(
            AppliedRequestRow.tenant_id == tenant_id,
            AppliedRequestRow.user_id == user_id,
            AppliedRequestRow.request_id == request_id,
        )
        with self._database.reading("applied_result") as session:
            return session.scalar(query)
