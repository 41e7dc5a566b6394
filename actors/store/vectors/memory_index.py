"""``InMemoryIndex``: the in-process fake of ``actors.store.vectors.index.VectorIndex`` for unit tests.

Same observable semantics as ``MilvusIndex``: one namespace per tenant (nothing is visible across tenants),
search restricted to one user and optionally to layers/states, exact inner-product ranking best first,
identifiers and vectors validated by ``actors.store.vectors.filters`` exactly as the real index does.
"""

import threading
from dataclasses import dataclass

import numpy as np

from actors.store.vectors.filters import (
    checked_layers,
    checked_row,
    checked_states,
    checked_vector,
    partition_name,
)
from actors.store.vectors.index import VectorHit, VectorRow
from schemas.enums import Layer, State
from schemas.ids import check_memory_id, check_user_id


@dataclass(frozen=True, slots=True)
class _Entry:
    user_id: str
    layer: Layer
    state: State
    vector: np.ndarray


class InMemoryIndex:
    def __init__(self, dim: int):
        self.dim = dim
        self._tenants: dict[str, dict[str, _Entry]] = {}
        self._lock = threading.Lock()

    def _rows(self, tenant_id: str) -> dict[str, _Entry]:
        """The tenant's rows, or an empty dict when it has never been written (tenant id validated)."""
        return self._tenants.get(partition_name(tenant_id), {})

    def ensure_tenant(self, tenant_id: str) -> None:
        with self._lock:
            self._tenants.setdefault(partition_name(tenant_id), {})

    def drop_tenant(self, tenant_id: str) -> None:
        with self._lock:
            self._tenants.pop(partition_name(tenant_id), None)

    def upsert(self, tenant_id: str, rows: list[VectorRow]) -> None:
        checked = [checked_row(row, self.dim) for row in rows]
        with self._lock:
            tenant = self._tenants.setdefault(partition_name(tenant_id), {})
            for row in checked:
                tenant[row.memory_id] = _Entry(row.user_id, row.layer, row.state, row.vector.copy())

    def delete(self, tenant_id: str, memory_ids: list[str]) -> None:
        doomed = [check_memory_id(memory_id) for memory_id in memory_ids]
        with self._lock:
            tenant = self._rows(tenant_id)
            for memory_id in doomed:
                tenant.pop(memory_id, None)

    def delete_user(self, tenant_id: str, user_id: str) -> None:
        check_user_id(user_id)
        with self._lock:
            tenant = self._rows(tenant_id)
            for memory_id in [m for m, entry in tenant.items() if entry.user_id == user_id]:
                del tenant[memory_id]

    def search(
        self,
        tenant_id: str,
        user_id: str,
        vector: np.ndarray,
        k: int,
        layers: frozenset[Layer] | None = None,
        states: frozenset[State] | None = None,
    ) -> list[VectorHit]:
        """Nearest items of one user inside the tenant, best first; ties broken by memory id."""
        return self._nearest(tenant_id, check_user_id(user_id), vector, k, layers, states)

    def search_tenant(
        self, tenant_id: str, vector: np.ndarray, k: int, states: frozenset[State] | None = None
    ) -> list[VectorHit]:
        """Nearest items of any user of the tenant, best first; ties broken by memory id."""
        return self._nearest(tenant_id, None, vector, k, None, states)

    def _nearest(
        self,
        tenant_id: str,
        user_id: str | None,
        vector: np.ndarray,
        k: int,
        layers: frozenset[Layer] | None,
        states: frozenset[State] | None,
    ) -> list[VectorHit]:
        query = checked_vector(vector, self.dim)
        wanted_layers = None if layers is None else set(checked_layers(layers))
        wanted_states = None if states is None else set(checked_states(states))
        with self._lock:
            candidates = [
                (memory_id, entry)
                for memory_id, entry in self._rows(tenant_id).items()
                if user_id in (None, entry.user_id)
                and (wanted_layers is None or entry.layer in wanted_layers)
                and (wanted_states is None or entry.state in wanted_states)
            ]
        if k < 1 or not candidates:
            return []
        scores = np.stack([entry.vector for _, entry in candidates]) @ query
        ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i][0]))[:k]
        return [
            VectorHit(
                candidates[i][0],
                float(scores[i]),
                candidates[i][1].layer,
                candidates[i][1].state,
                candidates[i][1].user_id,
            )
            for i in ranked
        ]

    def ids(self, tenant_id: str, user_id: str | None = None) -> set[str]:
        if user_id is not None:
            check_user_id(user_id)
        with self._lock:
            return {m for m, entry in self._rows(tenant_id).items() if user_id in (None, entry.user_id)}

    def count(self, tenant_id: str, user_id: str | None = None) -> int:
        return len(self.ids(tenant_id, user_id))
