"""Archive restore (docs/jobs.md#restore): bring archived items back to long-term for the users and topics
that became relevant again — respecting long-term capacity (an item is restored only into free room, never by
evicting another) and the tenant's retention window (items archived longer ago stay archived).

Which archived items are candidates, per user:

* ``--slot S`` (repeatable): items of those profile slots (topics);
* ``--query TEXT``: items whose embedding is similar to the query's (cosine ≥ ``--min-query-similarity``),
  most similar first; with ``--slot`` too, both must hold;
* neither: **relevance to recent activity** — items sharing a slot with, or similar (cosine ≥
  ``--min-similarity``) to, what the user stated or recalled in the last ``--recent-days`` days.

The candidates come from the user's most recently archived items in SQL and, over the whole archive, from the
vector index: the items nearest the query (or nearest each of the user's recent memories) and, with
``--slot``, every archived item of those slots. At most ``--limit`` items per user, best first (most similar,
then most recently archived). Each user's restore runs under their lease and a fresh claim on the user
(``jobs.common.UserRunner``), audited as ``job:restore``; the restored items' index rows move back to the
long-term layer.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from actors.adapters.embedding import make_embedder
from actors.app.archive import IndexedArchive
from actors.core.memory import MemoryItem, utcnow
from actors.core.recall.vectors import as_vector
from actors.store.vectors.index import VectorIndex
from jobs import defaults
from jobs.common import UserRunner, batch_job, rows_of, traced_batch
from schemas.errors import HermesError
from schemas.settings import HermesSettings

JOB = "restore"
#: archived items looked at per user (most recently archived first)
MAX_ARCHIVED_PER_USER = 2000
#: recent memories whose nearest archived items the vector index is asked for, per user (newest first)
RECENT_PROBES = 16
REASON = "relevant again (restore job)"


@dataclass
class RestorePlan:
    slots: list[str] = field(default_factory=list)
    query_vector: list[float] | None = None
    recent_days: int = defaults.RESTORE_RECENT_DAYS
    min_similarity: float = defaults.RESTORE_MIN_SIMILARITY
    min_query_similarity: float = defaults.RESTORE_MIN_QUERY_SIMILARITY
    limit: int = defaults.RESTORE_LIMIT

    def candidates(self, archived: list[MemoryItem], recent: list[MemoryItem]) -> list[str]:
        """Ids of the archived items to restore, best first."""
        scored: list[tuple[float, float, str]] = []
        recent_slots = {i.slot for i in recent if i.slot}
        recent_vectors = _matrix(recent)
        query = None if self.query_vector is None else np.asarray(self.query_vector, dtype=np.float32)
        for item in archived:
            vector = as_vector(item.embedding)
            if self.slots and item.slot not in self.slots:
                continue
            if query is not None:
                similarity = float(vector @ query) if vector is not None else 0.0
                if similarity < self.min_query_similarity:
                    continue
            elif self.slots:
                similarity = 1.0
            else:
                similarity = _best(recent_vectors, vector)
                if item.slot not in recent_slots and similarity < self.min_similarity:
                    continue
            archived_at = item.archived_at.timestamp() if item.archived_at else 0.0
            scored.append((similarity, archived_at, item.memory_id))
        scored.sort(reverse=True)
        return [memory_id for _, _, memory_id in scored[: self.limit]]


def _matrix(items: list[MemoryItem]) -> np.ndarray | None:
    vectors = [as_vector(i.embedding) for i in items if i.embedding is not None]
    return np.vstack(vectors) if vectors else None


def _best(matrix: np.ndarray | None, vector: np.ndarray | None) -> float:
    if matrix is None or vector is None or matrix.shape[1] != vector.shape[0]:
        return 0.0
    return float((matrix @ vector).max())


class RestoreUsers:
    """Ray Data worker: picks each user's candidates and restores them through the user's runner."""

    def __init__(self, settings_json: str, run_id: str, trace_context: dict[str, str], plan: dict[str, Any]):
        self.runner = UserRunner(HermesSettings.model_validate_json(settings_json), holder=run_id)
        self.trace_context = trace_context
        self.plan = RestorePlan(**plan)
        self._retention: dict[str, int] = {}
        self._index: VectorIndex | None = None

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        out: dict[str, list] = defaultdict(list)
        rows = list(rows_of(batch))
        with traced_batch("restore.batch", self.trace_context, users=len(rows)):
            for row in rows:
                for key, value in {**row, **self._one(row["tenant_id"], row["user_id"])}.items():
                    out[key].append(value)
        return dict(out)

    def _one(self, tenant_id: str, user_id: str) -> dict[str, Any]:
        store = self.runner.store
        now = utcnow()
        horizon = now - timedelta(days=self._retention_days(tenant_id))
        archived = [
            i
            for i in store.memories.archived(tenant_id, user_id, limit=MAX_ARCHIVED_PER_USER)
            if i.archived_at is None or i.archived_at >= horizon
        ]
        since = now - timedelta(days=self.plan.recent_days)
        recent = [i for i in store.memories.load_active(tenant_id, user_id) if i.last_accessed_at >= since]
        known = {i.memory_id for i in archived}
        archived += [
            i
            for i in self._whole_archive(tenant_id, user_id, recent)
            if i.memory_id not in known and (i.archived_at is None or i.archived_at >= horizon)
        ]
        chosen = self.plan.candidates(list({i.memory_id: i for i in archived}.values()), recent)
        if not chosen:
            return {"candidates": 0, "restored": 0, "skipped": 0, "route": "none"}
        try:
            outcome = self.runner.run(
                tenant_id, user_id, lambda maintenance: maintenance.restore_archived(chosen, REASON)
            )
        except HermesError:
            return {"candidates": len(chosen), "restored": 0, "skipped": len(chosen), "route": "failed"}
        result = outcome.result
        return {
            "candidates": len(chosen),
            "restored": len(result["restored"]),
            "skipped": len(result["skipped"]),
            "route": "lease",
        }

    def _whole_archive(self, tenant_id: str, user_id: str, recent: list[MemoryItem]) -> list[MemoryItem]:
        """Candidates beyond the newest rows: the slots' archived items, and what the vector index finds
        nearest the query or the user's recent memories."""
        store = self.runner.store
        found = [
            item
            for slot in self.plan.slots
            for item in store.memories.archived(tenant_id, user_id, slot=slot, limit=MAX_ARCHIVED_PER_USER)
        ]
        if self.plan.query_vector is not None:
            probes = [np.asarray(self.plan.query_vector, dtype=np.float32)]
        elif self.plan.slots:
            probes = []
        else:
            newest = sorted(recent, key=lambda i: i.last_accessed_at, reverse=True)[:RECENT_PROBES]
            probes = [v for v in (as_vector(i.embedding) for i in newest) if v is not None]
        if probes:
            archive = IndexedArchive(tenant_id, user_id, store, lambda: self._vector_index(len(probes[0])))
            for probe in probes:
                found += archive.nearest(probe, self.plan.limit)
        return found

    def _vector_index(self, dim: int) -> VectorIndex:
        if self._index is None:
            from actors.store.vectors.milvus import MilvusIndex

            settings = self.runner.settings
            self._index = MilvusIndex(settings.milvus_uri, settings.milvus_collection, dim)
        return self._index

    def _retention_days(self, tenant_id: str) -> int:
        if tenant_id not in self._retention:
            self._retention[tenant_id] = self.runner.store.tenants.policy(tenant_id).archive_retention_days
        return self._retention[tenant_id]


def run(
    settings: HermesSettings,
    tenants: list[str] | None = None,
    *,
    users: list[str] | None = None,
    plan: RestorePlan | None = None,
    query: str | None = None,
    parallelism: int | None = None,
    progress_bar: bool = False,
) -> dict[str, Any]:
    plan = plan or RestorePlan()
    with batch_job(settings, JOB, tenants, parallelism, progress_bar) as job:
        if query:
            plan.query_vector = make_embedder(settings.embedder).embed_queries([query])[0].tolist()
        shown = {k: v for k, v in asdict(plan).items() if k != "query_vector"}
        with job.record(users=users, query=query, **shown) as current:
            holders = job.users(job.tenants, holding="archived", only=users)
            progress = job.progress(holders.count() if holders is not None else 0)
            totals: dict[str, int] = defaultdict(int)
            if holders is not None:
                for rows in job.map(holders, RestoreUsers, current, run_id=current.run_id, plan=asdict(plan)):
                    for row in rows:
                        for key in ("candidates", "restored", "skipped"):
                            totals[key] += row[key]
                        totals[f"via_{row['route']}"] += 1
                    progress.update(len(rows), restored=totals["restored"])
            progress.close()
            current.report = {
                "users": progress.total,
                "candidates": totals["candidates"],
                "restored": totals["restored"],
                "skipped": totals["skipped"],
                "via_lease": totals["via_lease"],
                "failed": totals["via_failed"],
            }
        return current.report


def main(argv: list[str] | None = None) -> int:
    from jobs.cli import run_module

    return run_module(JOB, argv)


if __name__ == "__main__":
    raise SystemExit(main())
