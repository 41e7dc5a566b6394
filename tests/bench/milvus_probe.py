"""How milvus-lite's per-call cost grows with the tenant's partition: one user's filtered search (the recall's
semantic route) and the listing of one user's ids (what an actor's activation reconciles), timed on each
seeded tenant straight through ``MilvusIndex``, before the stack starts (nothing else is querying).

milvus-lite evaluates filters and de-duplicates rows in Python over every row of the partitions it searches,
so both grow with the partition's rows, not with the user's."""

from __future__ import annotations

import statistics
import time

import numpy as np

from actors.store.milvus import MilvusIndex
from schemas.enums import Layer

ACTIVE = frozenset({Layer.WORKING, Layer.LONGTERM, Layer.CORE})


def _median_seconds(repeats: int, call, *args, **kwargs) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call(*args, **kwargs)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def probe(uri: str, collection: str, partitions: dict[str, tuple[int, str]], repeats: int = 3) -> list[dict]:
    """``partitions``: tenant → (rows seeded, a user of it). Median seconds per call, per tenant."""
    index = MilvusIndex(uri, collection, 384, timeout=600)
    rng = np.random.default_rng(0)
    figures = []
    for tenant, (rows, user) in partitions.items():
        vector = rng.standard_normal(384).astype(np.float32)
        vector /= np.linalg.norm(vector)
        search_s = _median_seconds(repeats, index.search, tenant, user, vector, 40, layers=ACTIVE)
        ids_s = _median_seconds(repeats, index.ids, tenant, user)
        figures.append(
            {
                "tenant": tenant,
                "rows": rows,
                "user_rows": len(index.ids(tenant, user)),
                "search_s": search_s,
                "ids_s": ids_s,
            }
        )
    return figures
