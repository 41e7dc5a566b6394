"""Reindex (docs/jobs.md#reindex): rebuild each tenant's vector partition from SQL, the source of truth, so
that the index afterwards holds exactly the tenant's active and archived items, each with its current layer
and state — repairing any drift (rows lost or deleted by hand, stale layers, strays).

Per tenant:

1. Ray Data reads the items that belong in the index (``read_sql``: id, user, layer, state, version,
   embedding) and upserts them in parallel batches; an item without a stored embedding (or one of another
   dimension) is embedded first;
2. index rows SQL does not hold are deleted (the index is listed before SQL is read again, so a row a
   live write indexed during the run is in that SQL read too and never taken for a stray);
3. items whose row version moved while the job ran (a live write landed after the read) are upserted again
   from their current row, so the index ends on the newest state;
4. the two id sets are compared and reported (``agree``).

No user's memory changes, so no lease or claim is involved; live writes keep reaching the index through
the hosts' outbox.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from actors.adapters.embedding import Embedder, make_embedder
from actors.adapters.tracing import span
from actors.core.memory import MemoryItem
from actors.core.recall.vectors import as_vector
from actors.store.sql.jobs import INDEX_COLUMNS, indexed_content
from actors.store.vectors.index import VectorRow
from actors.store.vectors.milvus import MilvusIndex
from jobs.common import BatchJob, JobRun, Progress, batch_job, rows_of, traced_batch
from schemas.enums import Layer, State
from schemas.settings import HermesSettings

JOB = "reindex"
ROWS_PER_BATCH = 500


class IndexWriter:
    """Ray Data worker: (embeds where needed and) upserts a batch of a tenant's rows."""

    def __init__(self, settings_json: str, tenant_id: str, trace_context: dict[str, str]):
        settings = HermesSettings.model_validate_json(settings_json)
        self.embedder, self.index = _connect(settings)
        self.tenant_id = tenant_id
        self.trace_context = trace_context

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        rows = list(rows_of(batch))
        with traced_batch("reindex.batch", self.trace_context, rows=len(rows)):
            self.index.upsert(self.tenant_id, vector_rows(rows, self.embedder))
        return {"memory_id": [r["memory_id"] for r in rows], "version": [r["version"] for r in rows]}


def _connect(settings: HermesSettings) -> tuple[Embedder, MilvusIndex]:
    """The embedder (loaded only if a row lacks its vector) and a client of the vector index."""
    embedder = make_embedder(settings.embedder, num_threads=1)
    return embedder, MilvusIndex(settings.milvus_uri, settings.milvus_collection, embedder.dim)


def vector_rows(rows: list[dict[str, Any]], embedder: Any) -> list[VectorRow]:
    """Index rows from SQL rows (dicts of ``INDEX_COLUMNS``); missing or mis-sized vectors are re-embedded."""
    vectors = [as_vector(r["embedding"]) for r in rows]
    stale = [n for n, v in enumerate(vectors) if v is None or v.shape[0] != embedder.dim]
    if stale:
        texts = [indexed_content(rows[n]) for n in stale]
        fresh = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
        for n, vector in zip(stale, fresh, strict=True):
            vectors[n] = vector
    return [
        VectorRow(r["memory_id"], r["user_id"], Layer(r["layer"]), State(r["state"]), cast(np.ndarray, v))
        for r, v in zip(rows, vectors, strict=True)
    ]


def _record(item: MemoryItem) -> dict[str, Any]:
    return {name: getattr(item, name) for name in INDEX_COLUMNS}


def reindex_tenant(job: BatchJob, run: JobRun, tenant_id: str, progress: Progress) -> dict[str, Any]:
    store = job.store
    embedder, index = _connect(job.settings)
    index.ensure_tenant(tenant_id)
    written: dict[str, int] = {}
    rows = job.read(store.jobs.indexed_read(tenant_id))
    for batch in job.map(rows, IndexWriter, run, batch_size=ROWS_PER_BATCH, tenant_id=tenant_id):
        written.update((row["memory_id"], row["version"]) for row in batch)
        progress.update(len(batch))
    with span("reindex.prune", tenant_id=tenant_id):
        # index first, SQL second: a live write commits before it upserts, so any row it indexed by now is
        # in this SQL read too, and is never taken for a stray
        indexed = index.ids(tenant_id)
        current = store.jobs.indexed_versions(tenant_id)
        strays = sorted(indexed - set(current))
        if strays:
            index.delete(tenant_id, strays)
    with span("reindex.catch_up", tenant_id=tenant_id):
        moved = [memory_id for memory_id, version in current.items() if written.get(memory_id) != version]
        caught_up = store.jobs.items_by_id(tenant_id, moved)
        if caught_up:
            index.upsert(tenant_id, vector_rows([_record(i) for i in caught_up], embedder))
    indexed = index.ids(tenant_id)
    expected = set(store.jobs.indexed_versions(tenant_id))
    return {
        "rows": len(written),
        "strays_deleted": len(strays),
        "caught_up": len(caught_up),
        "missing_after": len(expected - indexed),
        "strays_after": len(indexed - expected),
        "agree": indexed == expected,
    }


def run(
    settings: HermesSettings,
    tenants: list[str] | None = None,
    *,
    parallelism: int | None = None,
    progress_bar: bool = False,
) -> dict[str, Any]:
    with batch_job(settings, JOB, tenants, parallelism, progress_bar) as job:
        with job.record() as current:
            total = sum(len(job.store.jobs.indexed_versions(t)) for t in job.tenants)
            progress = job.progress(total, unit="row")
            per_tenant = {tenant: reindex_tenant(job, current, tenant, progress) for tenant in job.tenants}
            progress.close()
            current.report = {
                "tenants": per_tenant,
                "rows": sum(t["rows"] for t in per_tenant.values()),
                "agree": all(t["agree"] for t in per_tenant.values()),
            }
        return current.report


def main(argv: list[str] | None = None) -> int:
    from jobs.cli import run_module

    return run_module(JOB, argv)


if __name__ == "__main__":
    raise SystemExit(main())
