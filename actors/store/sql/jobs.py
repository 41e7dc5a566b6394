"""The batch jobs' bookkeeping beside the memories (``MemoryStore.jobs``): user leases, profile-snapshot
digests, cohort features, job-run records, the archive history read for the eviction hit rate, and the
reads the jobs hand to Ray Data (``SqlRead``: the users holding items, the rows the vector index holds)
with the unsealing of what they read. None of it is a user's memory: the jobs write these tables directly.

A *lease* keeps two jobs off one user (docs/jobs.md): the job holding it then claims the user (the fencing
epoch that also keeps a live host's writes apart, docs/architecture.md "Fencing"), commits under that claim
and releases the lease. A lease expires on its own (a crashed job).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sqlalchemy import Select, and_, case, create_engine, delete, exists, func, make_url, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import NullPool

from actors.adapters.crypto import item_context, unseal
from actors.core.memory import MemoryItem, utcnow
from actors.core.records import CohortFeature
from actors.store.sql.database import Database
from actors.store.sql.tables import (
    AuditEventRow,
    CohortFeatureRow,
    JobRunRow,
    MemoryItemRow,
    ProfileSnapshotRow,
    UserConsentRow,
    UserLeaseRow,
)
from schemas.enums import ACTIVE_STATES, Layer

#: audit actions that move an item into, or out of, the archive
ARCHIVE_MOVES = ("archive", "restore")
#: the items the vector index holds: active ones, and archived ones (the archive recall route)
INDEXED = or_(
    and_(MemoryItemRow.state.in_(ACTIVE_STATES), MemoryItemRow.layer != Layer.ARCHIVE),
    MemoryItemRow.layer == Layer.ARCHIVE,
)

#: the columns of the rows the reindex job reads (``JobRecords.indexed_read``)
INDEX_COLUMNS = ("memory_id", "user_id", "layer", "state", "version", "content", "embedding")


@dataclass(frozen=True, slots=True)
class SqlRead:
    """A query for ``ray.data.read_sql``: its text, its parameters in the driver's own style, and the
    database's URL for ``connect``."""

    sql: str
    params: Any
    url: str

    def connect(self) -> Any:
        """A DB-API connection (closing it really closes it: no pool)."""
        return create_engine(self.url, poolclass=NullPool).raw_connection()


def indexed_content(row: Mapping[str, Any]) -> str:
    """The plaintext content of a row read by ``JobRecords.indexed_read`` (or of an item's record)."""
    content: str = row["content"]
    return unseal(content, item_context(row["memory_id"], "content"))


class JobRecords:
    """Held by ``MemoryStore`` as ``store.jobs``."""

    def __init__(self, database: Database):
        self._database = database

    # ------------------------------------------------------------------------------------- leases

    def acquire_lease(self, tenant_id: str, user_id: str, holder: str, seconds: float) -> bool:
        """Claim the user for ``seconds``; False while someone else holds an unexpired lease."""
        now = utcnow()
        try:
            with self._database.writing("acquire_lease") as session:
                row = session.get(UserLeaseRow, (tenant_id, user_id))
                if row is None:
                    row = UserLeaseRow(tenant_id=tenant_id, user_id=user_id)
                    session.add(row)
                elif row.holder != holder and row.expires_at > now:
                    return False
                row.holder = holder
                row.expires_at = now + timedelta(seconds=seconds)
        except IntegrityError:  # another job inserted its lease first
            return False
        return True

    def release_lease(self, tenant_id: str, user_id: str, holder: str) -> None:
        with self._database.writing("release_lease") as session:
            session.execute(
                delete(UserLeaseRow).where(
                    UserLeaseRow.tenant_id == tenant_id,
                    UserLeaseRow.user_id == user_id,
                    UserLeaseRow.holder == holder,
                )
            )

    # -------------------------------------------------------------------------- profile snapshots

    def profile_digests(self, tenant_id: str, user_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        wanted = list(user_ids)
        if not wanted:
            return {}
        query = select(ProfileSnapshotRow.user_id, ProfileSnapshotRow.digests).where(
            ProfileSnapshotRow.tenant_id == tenant_id, ProfileSnapshotRow.user_id.in_(wanted)
        )
        with self._database.reading("profile_digests") as session:
            return {user_id: dict(digests) for user_id, digests in session.execute(query)}

    def save_profile_digests(self, tenant_id: str, digests: dict[str, dict[str, str]], run_id: str) -> int:
        """Store each user's digests where they changed; returns how many rows were written."""
        if not digests:
            return 0
        written = 0
        with self._database.writing("save_profile_digests") as session:
            stored = {
                row.user_id: row
                for row in session.scalars(
                    select(ProfileSnapshotRow).where(
                        ProfileSnapshotRow.tenant_id == tenant_id,
                        ProfileSnapshotRow.user_id.in_(list(digests)),
                    )
                )
            }
            for user_id, user_digests in digests.items():
                row = stored.get(user_id)
                if row is not None and row.digests == user_digests:
                    continue
                if row is None:
                    row = ProfileSnapshotRow(tenant_id=tenant_id, user_id=user_id)
                    session.add(row)
                row.digests, row.run_id, row.taken_at = user_digests, run_id, utcnow()
                written += 1
        return written

    # --------------------------------------------------------------------------- cohort features

    def cohort_features(self, tenant_id: str) -> list[CohortFeature]:
        """The tenant's published cohort features, most widely shared first."""
        query = (
            select(CohortFeatureRow)
            .where(CohortFeatureRow.tenant_id == tenant_id)
            .order_by(CohortFeatureRow.share.desc(), CohortFeatureRow.slot, CohortFeatureRow.value)
        )
        with self._database.reading("cohort_features") as session:
            return [
                CohortFeature(r.slot, r.polarity, r.value, r.users, r.cohort_size, r.share)
                for r in session.scalars(query)
            ]

    def replace_cohort_features(self, tenant_id: str, features: Iterable[CohortFeature]) -> None:
        """The tenant's features become exactly these, in one transaction (readers never see half a set)."""
        now = utcnow()
        with self._database.writing("replace_cohort_features") as session:
            session.execute(delete(CohortFeatureRow).where(CohortFeatureRow.tenant_id == tenant_id))
            session.add_all(
                CohortFeatureRow(
                    tenant_id=tenant_id,
                    slot=f.slot,
                    polarity=f.polarity,
                    value=f.value,
                    users=f.users,
                    cohort_size=f.cohort_size,
                    share=f.share,
                    computed_at=now,
                )
                for f in features
            )

    # ------------------------------------------------------------------------------------ job runs

    def start_run(self, job: str, params: dict[str, Any]) -> str:
        run_id = f"{job}-{utcnow():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        with self._database.writing("start_run") as session:
            session.add(
                JobRunRow(
                    run_id=run_id, job=job, status="running", params=params, report={}, started_at=utcnow()
                )
            )
        return run_id

    def finish_run(self, run_id: str, status: str, report: dict[str, Any]) -> None:
        with self._database.writing("finish_run") as session:
            row = session.get(JobRunRow, run_id)
            if row is not None:
                row.status, row.report, row.finished_at = status, report, utcnow()

    def runs(self, job: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
        """Newest first."""
        query = select(JobRunRow).order_by(JobRunRow.started_at.desc()).limit(limit)
        if job is not None:
            query = query.where(JobRunRow.job == job)
        with self._database.reading("runs") as session:
            return [
                {
                    "run_id": r.run_id,
                    "job": r.job,
                    "status": r.status,
                    "params": r.params,
                    "report": r.report,
                    "started_at": r.started_at,
                    "finished_at": r.finished_at,
                }
                for r in session.scalars(query)
            ]

    # ----------------------------------------------------------------------------- archive history

    def archive_moves(
        self, tenant_id: str, user_id: str, since: datetime
    ) -> list[tuple[str | None, str, datetime]]:
        """(memory_id, "archive" | "restore", at) of the user since ``since``, oldest first."""
        query = (
            select(AuditEventRow.memory_id, AuditEventRow.action, AuditEventRow.at)
            .where(
                AuditEventRow.tenant_id == tenant_id,
                AuditEventRow.user_id == user_id,
                AuditEventRow.action.in_(ARCHIVE_MOVES),
                AuditEventRow.at >= since,
            )
            .order_by(AuditEventRow.at, AuditEventRow.id)
        )
        with self._database.reading("archive_moves") as session:
            rows = session.execute(query)
            return [(memory_id, action, at) for memory_id, action, at in rows if memory_id is not None]

    # ------------------------------------------------------------------------------------- reindex

    def indexed_versions(self, tenant_id: str) -> dict[str, int]:
        """memory id → row version of every item of the tenant that belongs in the vector index."""
        query = select(MemoryItemRow.memory_id, MemoryItemRow.version).where(
            MemoryItemRow.tenant_id == tenant_id, INDEXED
        )
        with self._database.reading("indexed_versions") as session:
            return dict(session.execute(query).tuples().all())

    def items_by_id(self, tenant_id: str, memory_ids: Iterable[str]) -> list[MemoryItem]:
        """Items of the tenant (any user) by id; ids that do not exist are left out."""
        wanted = list(memory_ids)
        if not wanted:
            return []
        query = select(MemoryItemRow.__table__).where(
            MemoryItemRow.tenant_id == tenant_id, MemoryItemRow.memory_id.in_(wanted)
        )
        return self._database.items("items_by_id", query)

    # ------------------------------------------------------------------------ reads for Ray Data

    def users_read(self, tenants: list[str], holding: str = "any", consenting_only: bool = False) -> SqlRead:
        """(tenant_id, user_id, items) of the tenants' users that hold any stored item, or only those with
        ``"archived"`` items; ``items`` counts each user's active items. ``consenting_only``: less the users
        who withdrew their own consent to group profiles (``user_consents``)."""
        row = MemoryItemRow
        active = row.state.in_(sorted(ACTIVE_STATES)) & (row.layer != Layer.ARCHIVE)
        query = select(row.tenant_id, row.user_id, func.sum(case((active, 1), else_=0)).label("items"))
        query = query.where(row.tenant_id.in_(tenants))
        if holding == "archived":
            query = query.where(row.layer == Layer.ARCHIVE)
        if consenting_only:
            withdrawn = select(UserConsentRow.user_id).where(
                UserConsentRow.tenant_id == row.tenant_id,
                UserConsentRow.user_id == row.user_id,
                UserConsentRow.group_profiles.is_(False),
            )
            query = query.where(~exists(withdrawn))
        return self._read(query.group_by(row.tenant_id, row.user_id).order_by(row.tenant_id, row.user_id))

    def indexed_read(self, tenant_id: str) -> SqlRead:
        """The ``INDEX_COLUMNS`` of the tenant's items that belong in the vector index, by id (the content
        sealed: ``indexed_content`` opens it)."""
        row = MemoryItemRow
        query = select(*(getattr(row, name) for name in INDEX_COLUMNS)).where(
            row.tenant_id == tenant_id, INDEXED
        )
        return self._read(query.order_by(row.memory_id))

    def _read(self, statement: Select[*tuple[Any, ...]]) -> SqlRead:
        """The statement compiled for the database's driver, its bound parameters in the driver's style."""
        dialect = make_url(self._database.url).get_dialect()()
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        values = {name: v.value if isinstance(v, Enum) else v for name, v in compiled.params.items()}
        params: Any = values
        if dialect.positional:
            assert compiled.positiontup is not None  # every positional dialect sets it
            params = tuple(values[name] for name in compiled.positiontup)
        return SqlRead(str(compiled), params, self._database.url)
