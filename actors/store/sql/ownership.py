"""What the host runtime keeps in SQL beside the memories: who owns a user (the fencing epoch, ``Fencing``)
and the vector-index outbox (``Outbox``). The fence check and the staging of outbox rows are plain functions
over the caller's session, so they join the transaction of the change they guard (docs/architecture.md,
"Fencing" and "Outbox").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

from sqlalchemy import Table, bindparam, delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from actors.core.memory import utcnow
from actors.store.sql.database import Database
from actors.store.sql.jobs import INDEXED
from actors.store.sql.tables import IndexOutboxRow, MemoryItemRow, UserOwnerRow
from schemas.errors import OwnershipLost

OutboxOp = Literal["upsert", "delete", "delete_user"]


@dataclass(frozen=True, slots=True)
class Fence:
    """A claim on one user: commits made under it are refused once someone claims the user after it."""

    owner: str
    epoch: int


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    seq: int
    tenant_id: str
    user_id: str
    memory_id: str | None
    op: OutboxOp


def claim(session: Session, tenant_id: str, user_id: str, owner: str) -> Fence:
    """Take the user over: the epoch moves past every earlier claim, whoever made it."""
    row = session.scalar(
        select(UserOwnerRow)
        .where(UserOwnerRow.tenant_id == tenant_id, UserOwnerRow.user_id == user_id)
        .with_for_update()
    )
    if row is None:
        row = UserOwnerRow(tenant_id=tenant_id, user_id=user_id, owner=owner, epoch=1, claimed_at=utcnow())
        session.add(row)
        try:
            session.flush()
        except IntegrityError:  # claimed concurrently for the first time: the caller's retry finds the row
            raise OwnershipLost(f"user {user_id!r} was claimed concurrently") from None
        return Fence(owner, 1)
    row.owner, row.epoch, row.claimed_at = owner, row.epoch + 1, utcnow()
    return Fence(owner, row.epoch)


_OWNERS = cast(Table, UserOwnerRow.__table__)
_OUTBOX = cast(Table, IndexOutboxRow.__table__)
#: read by every commit: built once
_EPOCH = select(_OWNERS.c.epoch).where(
    _OWNERS.c.tenant_id == bindparam("tenant_id"), _OWNERS.c.user_id == bindparam("user_id")
)
_EPOCH_LOCKED = _EPOCH.with_for_update()


def current_epoch(session: Session, tenant_id: str, user_id: str, *, lock: bool = False) -> int:
    scope = {"tenant_id": tenant_id, "user_id": user_id}
    return session.scalar(_EPOCH_LOCKED if lock else _EPOCH, scope) or 0


def check_fence(session: Session, tenant_id: str, user_id: str, fence: Fence | None) -> None:
    """Inside the committing transaction: refuse unless the fence's claim is still the latest one (the row
    is locked on PostgreSQL so a claim cannot slip in before the commit; SQLite writers are serialized)."""
    if fence is None:
        return
    epoch = current_epoch(session, tenant_id, user_id, lock=True)
    if epoch != fence.epoch:
        raise OwnershipLost(f"user {user_id!r} is now at epoch {epoch}; {fence.owner} holds {fence.epoch}")


def stage(
    session: Session, tenant_id: str, user_id: str, op: OutboxOp, memory_ids: Iterable[str | None]
) -> None:
    at = utcnow()
    rows = [
        {"tenant_id": tenant_id, "user_id": user_id, "memory_id": memory_id, "op": op, "at": at}
        for memory_id in memory_ids
    ]
    if rows:
        session.execute(insert(_OUTBOX), rows)


def pending(session: Session, limit: int, after: int = 0) -> list[OutboxEntry]:
    rows = session.execute(
        select(
            IndexOutboxRow.seq,
            IndexOutboxRow.tenant_id,
            IndexOutboxRow.user_id,
            IndexOutboxRow.memory_id,
            IndexOutboxRow.op,
        )
        .where(IndexOutboxRow.seq > after)
        .order_by(IndexOutboxRow.seq)
        .limit(limit)
    )
    return [
        OutboxEntry(seq, tenant_id, user_id, memory_id, cast(OutboxOp, op))
        for seq, tenant_id, user_id, memory_id, op in rows
    ]


def done(session: Session, seqs: list[int]) -> None:
    if seqs:
        session.execute(
            delete(IndexOutboxRow).where(IndexOutboxRow.seq.in_(seqs)),
            execution_options={"synchronize_session": False},
        )


class Fencing:
    """Who owns a user: a host or a job claims the user (a new epoch) and commits under that fence."""

    def __init__(self, database: Database):
        self._database = database

    def claim(self, tenant_id: str, user_id: str, owner: str) -> Fence:
        with self._database.writing("claim_user") as session:
            return claim(session, tenant_id, user_id, owner)

    def epoch(self, tenant_id: str, user_id: str) -> int:
        with self._database.reading("user_epoch") as session:
            return current_epoch(session, tenant_id, user_id)


class Outbox:
    """The vector-index outbox: the changes a commit staged, read and marked done by the runtime's drainer
    (``actors.runtime.outbox``), and the index rows of the items they name."""

    def __init__(self, database: Database):
        self._database = database

    def pending(self, limit: int, after: int = 0) -> list[OutboxEntry]:
        with self._database.reading("outbox_pending") as session:
            return pending(session, limit, after)

    def done(self, seqs: list[int]) -> None:
        with self._database.writing("outbox_done") as session:
            done(session, seqs)

    def indexable(self, tenant_id: str, memory_ids: Iterable[str]) -> list[dict[str, Any]]:
        """The index rows (id, user, layer, state, embedding) of those items that belong in the index."""
        row = MemoryItemRow
        query = select(row.memory_id, row.user_id, row.layer, row.state, row.embedding).where(
            row.tenant_id == tenant_id, row.memory_id.in_(list(memory_ids)), INDEXED
        )
        with self._database.reading("indexable") as session:
            return [dict(found) for found in session.execute(query).mappings()]
