"""The operator's search over one tenant: "which memories mention X", across every user, for access and
erasure requests.

The vector index finds the memories nearest the text in meaning inside the tenant's partition (no user
filter; the partition is the tenant's, and the filter holds only validated state names); SQL reads them
back, so a row the index still holds after a forget or an erasure is not shown, and what is shown is the
memory as stored now. Content is sealed at rest, so SQL cannot search it by text; a hit *mentions* the
query when its content or source turn contains it (case ignored), and those hits come first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from dataclasses import dataclass

from actors.adapters.embedding import Embedder, make_embedder
from actors.adapters.tracing import span
from actors.app.tenant_view import TenantView
from actors.core.memory import MemoryItem
from actors.store.vectors.index import VectorIndex
from schemas.enums import State
from schemas.settings import HermesSettings

#: hits asked of the index per hit returned: rows SQL no longer holds, or holds in another state, drop out
OVERFETCH = 2


@dataclass(frozen=True, slots=True)
class TenantMatch:
    item: MemoryItem
    score: float
    mentions: bool


def mentions(item: MemoryItem, text: str) -> bool:
    wanted = text.casefold()
    return wanted in item.content.casefold() or wanted in (item.source_text or "").casefold()


class TenantSearch:
    def __init__(self, index: Callable[[], VectorIndex], embedder: Callable[[], Embedder]):
        """``index`` and ``embedder``: connected and loaded on first search."""
        self._index = index
        self._embedder = embedder

    @classmethod
    def from_settings(cls, settings: HermesSettings) -> TenantSearch:
        """A search over the settings' Milvus collection, with its own embedder (one thread); two racing
        first searches may both open one, and the spare is dropped."""

        @functools.cache
        def embedder() -> Embedder:
            return make_embedder(settings.embedder, num_threads=1)

        @functools.cache
        def index() -> VectorIndex:
            from actors.store.vectors.milvus import MilvusIndex

            return MilvusIndex(settings.milvus_uri, settings.milvus_collection, embedder().dim)

        return cls(index, embedder)

    def search(
        self, view: TenantView, text: str, k: int, states: Collection[State] | None = None
    ) -> list[TenantMatch]:
        """Up to ``k`` of the view's tenant's memories nearest the text, those that mention it first."""
        wanted = None if states is None else frozenset(states)
        with span("embedder.embed_queries"):
            vector = self._embedder().embed_queries([text])[0]
        with span("milvus.search_tenant", k=k):
            hits = self._index().search_tenant(view.tenant_id, vector, OVERFETCH * k, wanted)
        stored = {item.memory_id: item for item in view.memories([hit.memory_id for hit in hits])}
        found = [
            TenantMatch(item, hit.score, mentions(item, text))
            for hit in hits
            if (item := stored.get(hit.memory_id)) is not None and (wanted is None or item.state in wanted)
        ]
        found.sort(key=lambda match: (not match.mentions, -match.score, match.item.memory_id))
        return found[:k]
