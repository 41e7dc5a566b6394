"""Multi-route recall inside one user's scope, fused into one ranking
(docs/design.md#recall-and-the-session-context).

Routes, each a ranked list of the user's memories:

* **semantic** — the query vector against the active items' matrix, in memory (``actors.core.recall.view``);
* **keyword** — BM25 over the active items (Chinese segmented with jieba), postings kept between calls;
  both routes match a memory cut from a longer turn by its own words and by the whole turn's
  (``actors.core.recall.view.recall_text`` / ``recall_vector``);
* **archive** — the semantic and keyword routes rank the active and archived items together (the archive
  held in the host as int8 rows, loaded on first need): the bounded gate bounds what a context holds, not
  what recall may search, so an archived hit competes on the same rank scale as an active one;
* **slot** — a query about food pulls the allergy and diet slots whatever their rank, so a cold but vital
  fact is never crowded out;
* **relation** — entities the query names, followed one or two hops through the memories that link them
  (``actors.core.relations``);
* **recency** and **importance** — the newest working items and the most important long-term ones, so
  that a vague query still sees what is current and what matters;
* **session** — the sessions whose memories answer best (the sum of their top ``SESSION_SUPPORT``
  relevances) lift every hit of theirs, a rank-scored share of relevance: what was said around a good hit
  is often what the question is about.

Fusion. Each ranked route turns a rank into a score ``1 / (1 + rank / RANK_SCALE)`` — embedding scores
bunch in a narrow band and BM25 scores are unbounded, so ranks are what compare across routes and queries.
``relevance`` blends the semantic and keyword route scores (an item high on both beats one high on
either), lifted to a floor by the slot route and to a hop-dependent level by the relation route, plus the
session route's share. Then ``total = w_sem·relevance + w_time·time_decay + w_imp·importance``
(``GatePolicy.fusion``: 0.55 / 0.25 / 0.20), × the frozen boost (1.3), × the negative weight (1.2 while
fresh). The constants were tuned on LoCoMo dev conversations 26, 30 and 41 and checked on 42 and 43
(docs/locomo.md).

Near-duplicates (same content hash, or embeddings at or above the near-duplicate similarity that also
share most of their content words) keep only their best-ranked hit; hits whose memories contradict each
other are flagged, not resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from actors.adapters.tracing import span
from actors.core.gate.engine import same_words
from actors.core.gate.valuation import days_between, negative_weight
from actors.core.memory import MemoryItem
from actors.core.recall.view import top
from actors.language.keywords import BM25, asks_about_the_past, joint_scores, query_slots, tokenize
from schemas import api
from schemas.enums import Layer, State

if TYPE_CHECKING:
    from actors.app.service import UserMemoryService
    from actors.core.recall.view import ActiveView

#: a route's rank r scores 1 / (1 + r / RANK_SCALE): gentle, so that time decay cannot let any fresh item
#: outrank an older one that ranked second (docs/locomo.md)
RANK_SCALE = 25.0
#: share of the keyword route in relevance (the rest is the semantic route)
KEYWORD_SHARE = 0.5
#: the session route: how many of a session's best relevances make its support, how many sessions it
#: lifts, and the share of relevance the best one adds (its rank-scored weight times this)
SESSION_SUPPORT = 3
SESSION_COUNT = 5
SESSION_SHARE = 0.18
SLOT_RELEVANCE_FLOOR = 0.8
HOP_RELEVANCE = {1: 0.5, 2: 0.3}
RECENT_COUNT = 3
IMPORTANT_COUNT = 3


def rank_score(rank: int) -> float:
    return 1.0 / (1.0 + rank / RANK_SCALE)


@dataclass
class _Candidate:
    item: MemoryItem
    semantic: float = 0.0
    keyword: float = 0.0
    slot: float = 0.0
    relation: float = 0.0
    session: float = 0.0
    routes: list[str] = field(default_factory=list)

    def note(self, route: str) -> None:
        if route not in self.routes:
            self.routes.append(route)


class RecallEngine:
    def __init__(self, service: UserMemoryService):
        self.service = service
        self.policy = service.policy
        self.now = service.clock()
        self.pool: dict[str, _Candidate] = {}
        self.past = False

    def recall(self, req: api.RecallRequest, query_vector: np.ndarray) -> list[api.RecallHit]:
        depth = max(4 * req.k, 40)
        self.past = asks_about_the_past(req.query)
        view = self.service.active_view()
        active = searched = view.items
        keywords = [view.keywords]
        archived: dict[str, MemoryItem] = {}
        with span("recall.semantic", docs=len(active)):
            similarities = view.similarities(query_vector)
        if req.include_archive:
            with span("recall.archive"):
                archived_items, vectors, archived_keywords = self.service.archive_view().rows()
                searched = active + archived_items
                similarities = np.concatenate([similarities, vectors @ query_vector])
                keywords.append(archived_keywords)
                archived = {i.memory_id: i for i in archived_items}
        self._ranked("semantic", [searched[n].memory_id for n in top(similarities, depth)], archived)
        self._ranked("keyword", self._keyword(searched, keywords, tokenize(req.query), depth), archived)
        self._slots(active, req.query)
        self._relations(view, req.query)
        self._recency(active)
        self._sessions()
        scored = sorted(
            ((self._total(c), c) for c in self.pool.values()), key=lambda t: (-t[0][0], t[1].item.memory_id)
        )
        return self._flag_contradictions(self._dedup(scored, req.k))

    # ------------------------------------------------------------------ routes

    @staticmethod
    def _keyword(items: list[MemoryItem], parts: list[BM25], terms: list[str], depth: int) -> list[str]:
        """The items by BM25 over ``parts`` (the postings of ``items``, in order), as one index."""
        if not items or not terms:
            return []
        with span("recall.keyword", docs=len(items)):
            scores = joint_scores(parts, terms)
        return [items[n].memory_id for n in top(scores, depth) if scores[n] > 0]

    def _ranked(self, route: str, ranked: list[str], archived: dict[str, MemoryItem]) -> None:
        """Add a ranked route's hits (memory ids, best first) to the pool, scored by rank."""
        for rank, memory_id in enumerate(ranked):
            item = self._live(memory_id, archived)
            if item is None:
                continue  # the index may lag SQL: SQL decides what exists
            entry = self.pool.setdefault(memory_id, _Candidate(item))
            if route == "semantic":
                entry.semantic = max(entry.semantic, rank_score(rank))
            else:
                entry.keyword = max(entry.keyword, rank_score(rank))
            entry.note(route)
            if item.state is State.ARCHIVED:
                entry.note("archive")

    def _slots(self, active: list[MemoryItem], query: str) -> None:
        wanted = query_slots(query)
        for item in active:
            if wanted and item.slot in wanted:
                entry = self.pool.setdefault(item.memory_id, _Candidate(item))
                entry.slot = 1.0
                entry.note("slot")

    def _relations(self, view: ActiveView, query: str) -> None:
        graph = view.graph
        named = graph.entities_in(query)
        for memory_id, hop in graph.hops(named).items():
            entry = self.pool.setdefault(memory_id, _Candidate(view.by_id[memory_id]))
            entry.relation = max(entry.relation, HOP_RELEVANCE[hop])
            entry.note(f"relation_hop{hop}")

    def _recency(self, active: list[MemoryItem]) -> None:
        working = [i for i in active if i.layer is Layer.WORKING]
        longterm = [i for i in active if i.layer is not Layer.WORKING]
        for route, chosen in (
            ("recency", sorted(working, key=lambda i: (i.created_at, i.memory_id))[-RECENT_COUNT:]),
            ("importance", sorted(longterm, key=lambda i: (i.importance, i.memory_id))[-IMPORTANT_COUNT:]),
        ):
            for item in chosen:
                self.pool.setdefault(item.memory_id, _Candidate(item)).note(route)

    def _sessions(self) -> None:
        """The session route: the best sessions by the relevance of their hits lift all of them."""
        relevances: dict[str, list[float]] = {}
        for c in self.pool.values():
            if c.item.source_session_id is not None:
                relevances.setdefault(c.item.source_session_id, []).append(self._relevance(c))
        support = {s: sum(sorted(found, reverse=True)[:SESSION_SUPPORT]) for s, found in relevances.items()}
        best = sorted(support, key=lambda s: (-support[s], s))[:SESSION_COUNT]
        weight = {s: rank_score(rank) for rank, s in enumerate(best)}
        for c in self.pool.values():
            c.session = weight.get(c.item.source_session_id or "", 0.0)
            if c.session:
                c.note("session")

    def _live(self, memory_id: str, archived: dict[str, MemoryItem]) -> MemoryItem | None:
        item = self.service.engine.items.get(memory_id)
        if item is not None and item.is_active:
            return item
        found = archived.get(memory_id)
        return found if found is not None and found.state is State.ARCHIVED else None

    # ------------------------------------------------------------------ fusion

    @staticmethod
    def _relevance(c: _Candidate) -> float:
        relevance = (1 - KEYWORD_SHARE) * c.semantic + KEYWORD_SHARE * c.keyword
        if c.slot:
            relevance = max(relevance, SLOT_RELEVANCE_FLOOR + (1 - SLOT_RELEVANCE_FLOOR) * relevance)
        return max(relevance, c.relation) + SESSION_SHARE * c.session

    def _time_decay(self, item: MemoryItem) -> float:
        """The decay curve of docs/design.md#the-bounded-gate: the item's kind's factor per day since its last
        access (frozen items do not decay). A question about the past ("When did Ana move?") is neutral:
        there an older memory is not a staler one."""
        if item.is_frozen or self.past:
            return 1.0
        return self.policy.decay.factor(item.kind) ** days_between(item.last_accessed_at, self.now)

    def _total(self, c: _Candidate) -> tuple[float, float, dict[str, float]]:
        """(total, time decay, boosts) of a candidate."""
        weights = self.policy.fusion
        item = c.item
        time_decay = self._time_decay(item)
        total = (
            weights.semantic * self._relevance(c)
            + weights.time_decay * time_decay
            + weights.importance * item.importance
        )
        boosts: dict[str, float] = {}
        if item.is_frozen:
            boosts["frozen"] = weights.frozen_boost
        negative = negative_weight(item, self.policy, self.now)
        if negative != 1.0:
            boosts["negative"] = negative
        for factor in boosts.values():
            total *= factor
        return total, time_decay, boosts

    def _hit(self, scored: tuple[float, float, dict[str, float]], c: _Candidate) -> api.RecallHit:
        total, time_decay, boosts = scored
        breakdown = api.ScoreBreakdown(
            semantic=round(c.semantic, 4),
            time_decay=round(time_decay, 4),
            importance=round(c.item.importance, 4),
            keyword=round(c.keyword, 4),
            slot=c.slot,
            relation=round(c.relation, 4),
            session=round(c.session, 4),
            relevance=round(self._relevance(c), 4),
            boosts=boosts,
            total=round(total, 6),
        )
        memory = api.MemoryOut.model_validate(c.item)
        return api.RecallHit(memory=memory, score=breakdown, routes=sorted(c.routes))

    def _dedup(self, scored: list[tuple[tuple, _Candidate]], k: int) -> list[api.RecallHit]:
        """The best k, skipping what repeats a better hit (``_repeats``)."""
        kept: list[_Candidate] = []
        hits: list[api.RecallHit] = []
        for totals, c in scored:
            if len(hits) == k:
                break
            if not any(self._repeats(c.item, better.item) for better in kept):
                kept.append(c)
                hits.append(self._hit(totals, c))
        return hits

    def _repeats(self, item: MemoryItem, better: MemoryItem) -> bool:
        """Same content hash, or a near-duplicate embedding that also says it in mostly the same words. Looser
        than the gate's restatement check (``GateEngine`` also compares values and polarity): two items the
        gate keeps apart because their values differ can still say the same thing to a reader."""
        if item.content_hash == better.content_hash:
            return True
        if item.embedding is None or better.embedding is None:
            return False
        similarity = float(
            np.frombuffer(item.embedding, np.float32) @ np.frombuffer(better.embedding, np.float32)
        )
        return similarity >= self.policy.near_duplicate_similarity and same_words(
            item.content, better.content
        )

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
