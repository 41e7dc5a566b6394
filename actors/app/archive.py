"""A user's archive where it is stored: the vector index finds the nearest archived items, SQL holds them.

``IndexedArchive`` is the ``DeepArchive`` of ``actors.core.recall.view``: recall reaches it for the part of
an archive beyond what the host keeps in memory (``GatePolicy.archive_memory_items``), and the restore job
asks it for candidates over the whole archive instead of only the newest rows. The index is derived and
may lag a commit or be down; so every hit is read back from SQL, which alone says whether the item is still
archived and what it says now, and an index that does not answer costs the caller only what it would have
found there (recall then answers from memory).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

import numpy as np

from actors.adapters.tracing import span
from actors.core.memory import MemoryItem
from actors.language.periods import Period
from actors.store.sql.store import MemoryStore
from actors.store.vectors.index import VectorIndex
from schemas.enums import Layer, State
from schemas.errors import HermesError

log = logging.getLogger(__name__)

_ARCHIVE = frozenset({Layer.ARCHIVE})
_ARCHIVED = frozenset({State.ARCHIVED})


class IndexedArchive:
    def __init__(self, tenant_id: str, user_id: str, store: MemoryStore, index: Callable[[], VectorIndex]):
        """``index``: the vector index, connected on first call (the host shares one)."""
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.store = store
        self._index = index

    def nearest(self, vector: np.ndarray, depth: int, held: Collection[str] = ()) -> list[MemoryItem]:
        """Of the ``depth`` archived items nearest the vector, best first, those not ``held`` by the caller,
        as SQL holds them now (what the caller holds is not read back)."""
        try:
            with span("milvus.search", depth=depth):
                hits = self._index().search(
                    self.tenant_id, self.user_id, vector, depth, layers=_ARCHIVE, states=_ARCHIVED
                )
        except HermesError as exc:
            log.warning("archive of %s not searched in the vector index: %s", self.user_id, exc)
            return []
        ids = [hit.memory_id for hit in hits if hit.memory_id not in held]
        if not ids:
            return []
        with span("sql.archived_by_id", items=len(ids)):
            stored = self.store.memories.archived(
                self.tenant_id, self.user_id, memory_ids=ids, limit=len(ids)
            )
        by_id = {item.memory_id: item for item in stored}
        return [by_id[memory_id] for memory_id in ids if memory_id in by_id]

    def told_within(self, period: Period, depth: int) -> list[MemoryItem]:
        """Up to ``depth`` archived items created within the period, the latest said first."""
        with span("sql.archived_in_period"):
            return self.store.memories.archived(
                self.tenant_id, self.user_id, created=(period.start, period.end), limit=depth
            )
