"""Multi-route recall inside one user's scope, fused into one ranking
(docs/design.md#recall-and-the-session-context).

The engine knows nothing of the service: it receives the user's active view, a loader of the archive view,
the policy and the time, runs the routes of ``actors.core.recall.routes`` (a registry: a route is one class
and one entry) over the active and — unless the caller leaves it out — the archived items together (the
bounded gate bounds what a context holds, not what recall may search), and returns domain ``Hit`` records.
The archive searched is what the host holds of it, and — when the user's archive is larger than that and
the query reaches further (``ArchiveView.reach``: a weak recall, an old period) — the items beyond it that
the vector index and SQL find for the query.

Fusion. A memory's ``relevance`` folds each route's score through that route's ``lift``; then ``total =
w_sem·relevance + min(relevance, 1)·(w_time·time_decay + w_imp·importance)`` (``GatePolicy.fusion``: 0.55 /
0.25 / 0.20), × the frozen boost (1.3), × the negative weight (1.2 while fresh). Freshness and importance
count as far as the memory answers the query: they order what matches, they do not bring in a memory the
query does not match (a frozen motto of importance 1 would otherwise outrank most answers to any query).
Near-duplicates (same content hash, or own embeddings at or above the near-duplicate similarity that also
share most of their content words) keep only their best-ranked hit; hits whose memories contradict each
other are flagged, not resolved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from actors.adapters.tracing import span
from actors.core.gate.valuation import days_between, negative_weight
from actors.core.memory import MemoryItem
from actors.core.recall.routes import DEFAULT_ROUTES, TIME_SLACK, Found, Query, Route, Searched
from actors.core.recall.vectors import item_vector
from actors.core.recall.view import ActiveView, ArchiveView
from actors.language.keywords import asks_about_the_past, tokenize
from actors.language.periods import Period, named_period
from actors.language.tokens import content_units, share_most
from schemas.enums import State
from schemas.settings import GatePolicy


@dataclass
class Hit:
    """One recalled memory and why it ranks where it does."""

    item: MemoryItem
    total: float
    relevance: float
    time_decay: float
    #: multiplicative boosts applied to the total ("frozen", "negative")
    boosts: dict[str, float]
    #: each route's score for the memory (only the routes that found it)
    scores: dict[str, float]
    #: the routes that found it, "archive" included for an archived memory
    routes: list[str]
    #: memory ids among the hits that contradict this one
    contradicts: list[str] = field(default_factory=list)


class RecallEngine:
    def __init__(
        self,
        view: ActiveView,
        archive: Callable[[], ArchiveView],
        policy: GatePolicy,
        now: datetime,
        routes: Sequence[Route] = DEFAULT_ROUTES,
        vector_of: Callable[[MemoryItem], np.ndarray | None] | None = None,
    ):
        """``archive``: the user's archive view, asked for only when a recall includes the archive;
        ``vector_of``: an item's vector wherever it is held (default: the bytes the item carries)."""
        self.view = view
        self.vector_of = vector_of or (lambda item: item_vector(item, view.dim))
        self.archive = archive
        self.policy = policy
        self.now = now
        self.routes = routes
        self._pool: dict[str, Found] = {}

    def recall(self, text: str, vector: np.ndarray, k: int, include_archive: bool = True) -> list[Hit]:
        query = Query(text=text, terms=tokenize(text), vector=vector, depth=max(4 * k, 40), now=self.now)
        searched = self._searched(query, include_archive)
        for position, route in enumerate(self.routes):
            with span(f"recall.{route.name}"):
                for item, score in route.find(query, searched, list(self._pool.values())):
                    self._add(item, route.name, score)
            for found in self._pool.values():
                found.fold(self.routes[: position + 1])
        past = asks_about_the_past(text)
        ranked = sorted(
            (self._scored(found, past) for found in self._pool.values()),
            key=lambda hit: (-hit.total, hit.item.memory_id),
        )
        return _flag_contradictions(self._dedup(ranked, k))

    # ------------------------------------------------------------------ search and pool

    def _searched(self, query: Query, include_archive: bool) -> Searched:
        view = self.view
        similarities = view.similarities(query.vector)
        if not include_archive:
            return Searched(view, view.items, similarities, [view.keywords])
        with span("recall.archive_parts"):
            archive = self.archive()
            parts = archive.parts()
        similarities = np.concatenate([similarities, *(part.vectors @ query.vector for part in parts)])
        period = named_period(query.text, query.now)
        told = None if period is None else Period(period.start, period.end + TIME_SLACK)
        best = float(similarities.max()) if len(similarities) else -1.0
        reach = archive.reach(best, told, self.policy.archive_search_below)
        if reach:
            with span("recall.archive_beyond", weak=reach.weak, old_period=reach.old_period) as current:
                beyond = archive.beyond(reach, query.vector, told, query.depth)
                current.set_attribute("items", 0 if beyond is None else len(beyond.items))
            if beyond is not None:
                parts = [*parts, beyond]
                similarities = np.concatenate([similarities, beyond.vectors @ query.vector])
        return Searched(
            view,
            view.items + [item for part in parts for item in part.items],
            similarities,
            [view.keywords, *(part.keywords for part in parts)],
        )

    def _add(self, item: MemoryItem, route: str, score: float) -> None:
        found = self._pool.setdefault(item.memory_id, Found(item))
        found.scores[route] = max(found.scores.get(route, 0.0), score)
        for name in (route, "archive") if item.state is State.ARCHIVED else (route,):
            if name not in found.routes:
                found.routes.append(name)

    # ------------------------------------------------------------------ fusion

    def _time_decay(self, item: MemoryItem, past: bool) -> float:
        """The decay curve of docs/design.md#the-bounded-gate: the item's kind's factor per day since its last
        access (frozen items do not decay). A question about the past ("When did Ana move?") is neutral:
        there an older memory is not a staler one."""
        if item.is_frozen or past:
            return 1.0
        return float(self.policy.decay.factor(item.kind) ** days_between(item.last_accessed_at, self.now))

    def _scored(self, found: Found, past: bool) -> Hit:
        weights = self.policy.fusion
        item = found.item
        relevance = found.relevance
        time_decay = self._time_decay(item, past)
        priors = weights.time_decay * time_decay + weights.importance * item.importance
        total = weights.semantic * relevance + min(relevance, 1.0) * priors
        boosts: dict[str, float] = {}
        if item.is_frozen:
            boosts["frozen"] = weights.frozen_boost
        negative = negative_weight(item, self.policy, self.now)
        if negative != 1.0:
            boosts["negative"] = negative
        for factor in boosts.values():
            total *= factor
        scores = {route: score for route, score in found.scores.items() if score}
        return Hit(item, total, relevance, time_decay, boosts, scores, list(found.routes))

    def _dedup(self, ranked: list[Hit], k: int) -> list[Hit]:
        """The best k, skipping what repeats a better hit (``repeats`` below). A hit is compared with every
        hit kept before it, so each item's vector and content words are read once, when first compared."""
        vectors: dict[str, np.ndarray | None] = {}
        words: dict[str, set[str]] = {}

        def vector(item: MemoryItem) -> np.ndarray | None:
            if item.memory_id not in vectors:
                vectors[item.memory_id] = self.vector_of(item)
            return vectors[item.memory_id]

        def words_of(item: MemoryItem) -> set[str]:
            if item.memory_id not in words:
                words[item.memory_id] = set(content_units(item.content))
            return words[item.memory_id]

        def repeats(item: MemoryItem, better: MemoryItem) -> bool:
            """Same content hash, or a near-duplicate embedding that also says it in mostly the same words.
            Looser than the gate's restatement check (``GateEngine`` also compares values and polarity): two
            items the gate keeps apart because their values differ can still say the same thing to a
            reader."""
            if item.content_hash == better.content_hash:
                return True
            mine, theirs = vector(item), vector(better)
            if mine is None or theirs is None:
                return False
            similarity = float(mine @ theirs)
            return similarity >= self.policy.near_duplicate_similarity and share_most(
                words_of(item), words_of(better)
            )

        kept: list[Hit] = []
        for hit in ranked:
            if len(kept) == k:
                break
            if not any(repeats(hit.item, better.item) for better in kept):
                kept.append(hit)
        return kept


def _flag_contradictions(hits: list[Hit]) -> list[Hit]:
    for hit in hits:
        m = hit.item
        for other in hits:
            o = other.item
            if o.memory_id == m.memory_id:
                continue
            linked = o.memory_id in m.conflicts_with or m.memory_id in o.conflicts_with
            opposed = (
                m.slot and m.slot == o.slot and m.value and m.value == o.value and m.polarity != o.polarity
            )
            if linked or opposed:
                hit.contradicts.append(o.memory_id)
    return hits
