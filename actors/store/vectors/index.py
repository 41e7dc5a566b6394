"""The vector-index seam. SQL is the source of truth; this index is derived from it and can be rebuilt.

One real implementation (``actors.store.vectors.milvus.MilvusIndex``: one partition per tenant, every search
inside the tenant's partition then filtered by user) and an in-memory fake for unit tests.

Two kinds of read: one user's nearest items (recall's archive beyond the in-memory budget, the restore job's
candidates) and one tenant's nearest items across its users (the operator's search for access and erasure
requests). Both run inside the tenant's partition; neither takes a filter from the caller, only ids and enum
members that ``actors.store.vectors.filters`` validates.
"""

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from schemas.enums import Layer, State


@dataclass(frozen=True, slots=True)
class VectorRow:
    memory_id: str
    user_id: str
    layer: Layer
    state: State
    vector: np.ndarray  # (dim,) float32, L2-normalized


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: str
    score: float  # cosine similarity (inner product of unit vectors)
    layer: Layer
    state: State
    user_id: str


class VectorIndex(Protocol):
    def ensure_tenant(self, tenant_id: str) -> None: ...

    def upsert(self, tenant_id: str, rows: list[VectorRow]) -> None: ...

    def delete(self, tenant_id: str, memory_ids: list[str]) -> None: ...

    def delete_user(self, tenant_id: str, user_id: str) -> None: ...

    def search(
        self,
        tenant_id: str,
        user_id: str,
        vector: np.ndarray,
        k: int,
        layers: frozenset[Layer] | None = None,
        states: frozenset[State] | None = None,
    ) -> list[VectorHit]:
        """Nearest items of one user inside the tenant's partition, best first."""
        ...

    def search_tenant(
        self, tenant_id: str, vector: np.ndarray, k: int, states: frozenset[State] | None = None
    ) -> list[VectorHit]:
        """Nearest items of any user of the tenant, best first: the operator's search."""
        ...

    def ids(self, tenant_id: str, user_id: str | None = None) -> set[str]:
        """Every memory id indexed for the tenant (or one user): what the reindex job compares with SQL."""
        ...
