"""Multi-route recall inside one user's scope, fused into one ranking (SPEC §7).

Routes: semantic (Milvus, inside the tenant partition, filtered by user), keyword (BM25 over the user's
active items; Chinese segmented with jieba), profile slot (a query about food pulls the allergy slot first,
so a cold but vital fact is never crowded out), recency, and the archive (penalised, restorable).

Fusion: ``relevance`` blends the semantic and keyword routes (rank-normalised: embedding scores bunch in a
narrow band, so they are ranked, not thresholded), then
``total = w_sem·relevance + w_time·time_decay + w_imp·importance``, × frozen boost, × negative weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from actors.errors import NotFound
from actors.keywords import BM25, query_slots, tokenize
from actors.memory import MemoryItem
from actors.tracing import span
from actors.valuation import days_between, negative_weight
from schemas import api
from schemas.enums import Layer, State

if TYPE_CHECKING:
    from actors.service import UserMemoryService

ACTIVE_LAYERS = frozenset({Layer.WORKING, Layer.LONGTERM, Layer.CORE})
ARCHIVE_PENALTY = 0.85
SLOT_RELEVANCE_FLOOR = 0.8
KEYWORD_SHARE = 0.35


@dataclass
class _Candidate:
    item: MemoryItem
    semantic: float = 0.0
    keyword: float = 0.0
    slot: float = 0.0
    routes: list[str] = field(default_factory=list)


class RecallEngine:
    def __init__(self, service: UserMemoryService):
        self.service = service
        self.policy = service.policy
        self.now = service.clock()

    def recall(self, req: api.RecallRequest, query_vector: np.ndarray) -> list[api.RecallHit]:
        pool: dict[str, _Candidate] = {}
        depth = max(4 * req.k, 40)
        self._semantic(pool, query_vector, depth, ACTIVE_LAYERS, "semantic")
        if req.include_archive:
            self._semantic(pool, query_vector, req.k * 2, frozenset({Layer.ARCHIVE}), "archive")
        self._keyword(pool, req.query, depth)
        self._slots(pool, req.query)
        self._recency(pool)
        ranked = sorted((self._score(c) for c in pool.values()), key=lambda h: -h.score.total)
        return self._flag_contradictions(self._dedup(ranked)[: req.k])

    # ------------------------------------------------------------------ routes

    def _semantic(self, pool, vector, depth, layers, route) -> None:
        service = self.service
        with span("milvus.search", route=route, k=depth):
            hits = service.index.search(service.tenant_id, service.user_id, vector, depth, layers=layers)
        if not hits:
            return
        scores = np.array([h.score for h in hits])
        low, high = float(scores.min()), float(scores.max())
        for hit in hits:
            item = self._live(hit.memory_id, archived_ok=route == "archive")
            if item is None:
                continue  # the index may lag SQL: SQL decides what exists
            normalized = 1.0 if high - low < 1e-9 else (hit.score - low) / (high - low)
            entry = pool.setdefault(item.memory_id, _Candidate(item))
            entry.semantic = max(entry.semantic, normalized)
            entry.routes.append(route)

    def _keyword(self, pool, query: str, depth: int) -> None:
        items = self.service.engine.active()
        terms = tokenize(query)
        if not items or not terms:
            return
        with span("recall.keyword", docs=len(items)):
            scores = BM25([tokenize(i.content) for i in items]).scores(terms)
        best = float(scores.max()) if len(scores) else 0.0
        if best <= 0:
            return
        for index in np.argsort(-scores)[:depth]:
            if scores[index] <= 0:
                break
            entry = pool.setdefault(items[index].memory_id, _Candidate(items[index]))
            entry.keyword = float(scores[index]) / best
            entry.routes.append("keyword")

    def _slots(self, pool, query: str) -> None:
        wanted = query_slots(query)
        if not wanted:
            return
        for item in self.service.engine.active():
            if item.slot in wanted:
                entry = pool.setdefault(item.memory_id, _Candidate(item))
                entry.slot = 1.0
                entry.routes.append("slot")

    def _recency(self, pool, count: int = 3) -> None:
        recent = sorted(self.service.engine.active(Layer.WORKING), key=lambda i: i.created_at)[-count:]
        for item in recent:
            pool.setdefault(item.memory_id, _Candidate(item)).routes.append("recency")

    def _live(self, memory_id: str, *, archived_ok: bool) -> MemoryItem | None:
        item = self.service.engine.items.get(memory_id)
        if item is not None:
            return item if item.is_active else None
        if not archived_ok:
            return None
        try:
            item = self.service.store.get_item(self.service.tenant_id, self.service.user_id, memory_id)
        except NotFound:
            return None
        return item if item.state is State.ARCHIVED else None

    # ------------------------------------------------------------------ fusion

    def _score(self, c: _Candidate) -> api.RecallHit:
        weights = self.policy.fusion
        item = c.item
        relevance = (1 - KEYWORD_SHARE) * c.semantic + KEYWORD_SHARE * c.keyword
        if c.slot:
            relevance = max(relevance, SLOT_RELEVANCE_FLOOR + 0.2 * relevance)
        time_decay = self.policy.decay.factor(item.kind) ** days_between(item.last_accessed_at, self.now)
        if item.is_frozen:
            time_decay = 1.0
        base = (
            weights.semantic * relevance
            + weights.time_decay * time_decay
            + weights.importance * item.importance
        )
        boosts: dict[str, float] = {}
        if item.is_frozen:
            boosts["frozen"] = weights.frozen_boost
        negative = negative_weight(item, self.policy, self.now)
        if negative != 1.0:
            boosts["negative"] = negative
        if item.state is State.ARCHIVED:
            boosts["archive"] = ARCHIVE_PENALTY
        total = base
        for factor in boosts.values():
            total *= factor
        breakdown = api.ScoreBreakdown(
            semantic=round(c.semantic, 4),
            time_decay=round(time_decay, 4),
            importance=round(item.importance, 4),
            keyword=round(c.keyword, 4),
            slot=c.slot,
            boosts=boosts,
            total=round(total, 6),
        )
        return api.RecallHit(
            memory=api.MemoryOut.from_item(item), score=breakdown, routes=sorted(set(c.routes))
        )

    def _dedup(self, ranked: list[api.RecallHit]) -> list[api.RecallHit]:
        kept: list[api.RecallHit] = []
        vectors: list[np.ndarray] = []
        threshold = self.policy.near_duplicate_similarity
        for hit in ranked:
            item = self.service.item(hit.memory.memory_id)
            vector = None if item.embedding is None else np.frombuffer(item.embedding, dtype=np.float32)
            if any(k.memory.content_hash == hit.memory.content_hash for k in kept):
                continue
            if vector is not None and any(float(v @ vector) >= threshold for v in vectors):
                continue
            kept.append(hit)
            if vector is not None:
                vectors.append(vector)
        return kept

    def _flag_contradictions(self, hits: list[api.RecallHit]) -> list[api.RecallHit]:
        for hit in hits:
            m = hit.memory
            for other in hits:
                o = other.memory
                if o.memory_id == m.memory_id:
                    continue
                linked = o.memory_id in m.conflicts_with or m.memory_id in o.conflicts_with
                opposed = (
                    m.slot
                    and m.slot == o.slot
                    and m.value
                    and m.value == o.value
                    and m.polarity != o.polarity
                )
                if linked or opposed:
                    hit.contradicts.append(o.memory_id)
        return hits
