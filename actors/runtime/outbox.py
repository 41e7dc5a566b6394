"""Draining the vector-index outbox: the index operations that commits staged in SQL, applied to the index
in batches and then deleted. An upsert re-reads the item's current row, so the index always ends on what
SQL holds now whatever order the entries are applied in; only a user's erasure must go first (a user may
write again after it). A failed batch stays in the outbox and is applied again later: every operation is
idempotent, so convergence depends on nothing but the index answering eventually."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from actors.store.sql.ownership import OutboxEntry
from actors.store.sql.store import MemoryStore
from actors.store.vectors.index import VectorIndex, VectorRow
from schemas.enums import Layer, State

#: outbox rows read per query, and most pages one drain looks through for its own entries (the head of the
#: queue belongs to other hosts only while they are down, and Ray restarts them)
PAGE = 500
MAX_PAGES = 20


def drain(
    store: MemoryStore,
    index: VectorIndex,
    dim: int,
    owns: Callable[[str, str], bool] = lambda tenant_id, user_id: True,
    limit: int = 1000,
) -> int:
    """Apply up to ``limit`` of the oldest entries ``owns`` accepts, then delete them; returns how many."""
    entries = pending_for(store, owns, limit)
    settle(store, index, entries, dim)
    return len(entries)


def settle(store: MemoryStore, index: VectorIndex, entries: list[OutboxEntry], dim: int) -> None:
    """Apply the entries to the index, then delete them from the outbox."""
    if entries:
        apply(store, index, entries, dim)
        store.outbox.done([e.seq for e in entries])


def pending_for(store: MemoryStore, owns: Callable[[str, str], bool], limit: int) -> list[OutboxEntry]:
    """Up to ``limit`` of the oldest entries whose user ``owns`` accepts (other hosts drain the rest)."""
    entries: list[OutboxEntry] = []
    after = 0
    for _ in range(MAX_PAGES):
        page = store.outbox.pending(PAGE, after)
        entries += [e for e in page if owns(e.tenant_id, e.user_id)]
        if len(page) < PAGE or len(entries) >= limit:
            break
        after = page[-1].seq
    return entries[:limit]


def apply(store: MemoryStore, index: VectorIndex, entries: list[OutboxEntry], dim: int) -> None:
    """Apply the entries to the index (then the caller deletes them from the outbox)."""
    by_tenant: dict[str, list[OutboxEntry]] = defaultdict(list)
    for entry in entries:
        by_tenant[entry.tenant_id].append(entry)
    for tenant_id, tenant_entries in by_tenant.items():
        index.ensure_tenant(tenant_id)
        for user_id in dict.fromkeys(e.user_id for e in tenant_entries if e.op == "delete_user"):
            index.delete_user(tenant_id, user_id)
        deleted = [e.memory_id for e in tenant_entries if e.op == "delete" and e.memory_id]
        upserted = list(
            dict.fromkeys(e.memory_id for e in tenant_entries if e.op == "upsert" and e.memory_id)
        )
        found = store.outbox.indexable(tenant_id, upserted) if upserted else []
        present = {f["memory_id"] for f in found}
        gone = deleted + [memory_id for memory_id in upserted if memory_id not in present]
        if gone:
            index.delete(tenant_id, gone)
        rows = [row for row in (_row(f, dim) for f in found) if row is not None]
        if rows:
            index.upsert(tenant_id, rows)


def _row(found: dict[str, Any], dim: int) -> VectorRow | None:
    blob = found["embedding"]
    if blob is None or len(blob) != 4 * dim:
        return None  # nothing to index without a vector: the reindex job embeds such rows
    vector = np.frombuffer(blob, dtype=np.float32)
    return VectorRow(
        found["memory_id"], found["user_id"], Layer(found["layer"]), State(found["state"]), vector
    )
