"""The recall routes: each finds memories for a query and says how its score enters a memory's relevance.

A route is one class with a ``name``, ``find`` (the memories it finds, each with a score in 0..1) and
``lift`` (how that score changes the relevance built by the routes before it); ``DEFAULT_ROUTES`` lists
them in the order they run and fold. A new route is one class and one entry there: the engine, the hits'
breakdown (a map of route → score) and the API need no edit. The numbers were tuned on LoCoMo dev
conversations 26, 30 and 41 and checked on 42 and 43 (docs/locomo.md).

* **semantic** — the query vector against the searched items' embeddings;
* **keyword** — BM25 over their recall texts (``view.recall_text``), the active and archived postings
  scored as one index; the two ranked routes score a rank ``r`` as ``1 / (1 + r / RANK_SCALE)`` (embedding
  scores bunch in a narrow band and BM25 scores are unbounded, so ranks are what compare across routes and
  queries) and blend: an item high on both beats one high on either;
* **slot** — a query about food pulls the allergy and diet slots whatever their rank, lifted to a floor, so
  a cold but vital fact is never crowded out; a slot that is not vital (where the user lives, their job) is
  only lifted a little: "where did I park?" is not a question about the user's city;
* **relation** — entities the query names, followed one or two hops through the memories that link them
  (``actors.core.relations``), at a hop-dependent level;
* **time** — a question that names a period ("in June", "on 13 October 2023", "2023年5月") lifts the
  memories said within it or in the ``TIME_SLACK`` after it (what happened is often told days later);
* **recency** and **importance** — the newest working items and the most important long-term ones, so that
  a vague query still sees what is current and what matters (they add candidates, not relevance);
* **session** — the sessions whose memories answer best (the sum of their top ``SESSION_SUPPORT``
  relevances) lift every hit of theirs by a rank-scored share: what was said around a good hit is often
  what the question is about.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import ClassVar, Protocol

import numpy as np

from actors.core.memory import MemoryItem
from actors.core.recall.view import ActiveView, top
from actors.core.slots import is_vital
from actors.language.keywords import Postings, joint_scores, query_slots
from actors.language.periods import Period, named_period
from schemas.enums import Layer

#: a route's rank r scores 1 / (1 + r / RANK_SCALE): gentle, so that time decay cannot let any fresh item
#: outrank an older one that ranked second
RANK_SCALE = 25.0
#: share of the keyword route in the blend of the two ranked routes (the rest is the semantic route's)
KEYWORD_SHARE = 0.5
#: the vital slots (``schemas.slots``: a query about them must never miss them) are lifted to a floor; any
#: other slot a query is about gets ``ORDINARY_SLOT_LIFT``
SLOT_RELEVANCE_FLOOR = 0.8
ORDINARY_SLOT_LIFT = 0.1
HOP_RELEVANCE = {1: 0.5, 2: 0.3}
RECENT_COUNT = 3
IMPORTANT_COUNT = 3
#: the time route: how long after a named period a memory may have been said and still be about it, and
#: the share of relevance it adds
TIME_SLACK = timedelta(days=14)
TIME_SHARE = 0.3
#: the session route: how many of a session's best relevances make its support, how many sessions it
#: lifts, and the share of relevance the best one adds (its rank-scored weight times this)
SESSION_SUPPORT = 3
SESSION_COUNT = 5
SESSION_SHARE = 0.18


def rank_score(rank: int) -> float:
    return 1.0 / (1.0 + rank / RANK_SCALE)


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[str, ...]
    vector: np.ndarray
    #: how many ranked candidates each ranked route contributes
    depth: int
    now: datetime


@dataclass(frozen=True)
class Searched:
    """What the routes look at: the active view, and the items searched (active, then archived) with their
    similarities to the query vector and their keyword postings, in that order."""

    view: ActiveView
    items: list[MemoryItem]
    similarities: np.ndarray
    keywords: Sequence[Postings]


@dataclass
class Found:
    """A memory in the candidate pool: each route's score for it, the routes that found it in order, and the
    relevance folded from the lifts of the routes that have run (``fold``)."""

    item: MemoryItem
    scores: dict[str, float] = field(default_factory=dict)
    routes: list[str] = field(default_factory=list)
    relevance: float = 0.0
    #: how many routes, in order, ``relevance`` has counted
    folded: int = 0

    def fold(self, routes: Sequence[Route]) -> None:
        """Count the lifts of ``routes`` not yet counted, in their order (0 for a route that did not find it):
        once every route has run, ``relevance`` is the fold of all their lifts."""
        for route in routes[self.folded :]:
            self.relevance = route.lift(self.relevance, self.scores.get(route.name, 0.0))
        self.folded = len(routes)


#: what a route sees of the candidate pool: what the routes before it found, with the relevance they gave
Pool = Sequence[Found]


class Route(Protocol):
    name: ClassVar[str]

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        """The memories this route finds, each with its score (0..1)."""
        ...

    def lift(self, relevance: float, score: float) -> float:
        """The relevance once this route's score for a memory is counted (0 when it did not find it)."""
        ...


class _Candidates:
    """A route that adds candidates but no relevance of its own."""

    @staticmethod
    def lift(relevance: float, score: float) -> float:
        return relevance


def _ranked(
    items: list[MemoryItem], scores: np.ndarray, depth: int, floor: float | None = None
) -> list[tuple[MemoryItem, float]]:
    """The best ``depth`` items by score (above ``floor`` when given), each with its rank's score."""
    best = [n for n in top(scores, depth) if floor is None or scores[n] > floor]
    return [(items[n], rank_score(rank)) for rank, n in enumerate(best)]


class SemanticRoute:
    name: ClassVar[str] = "semantic"
    share = 1 - KEYWORD_SHARE

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        return _ranked(searched.items, searched.similarities, query.depth)

    def lift(self, relevance: float, score: float) -> float:
        return relevance + self.share * score


class KeywordRoute:
    name: ClassVar[str] = "keyword"
    share = KEYWORD_SHARE

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        if not searched.items or not query.terms:
            return []
        # only the items that hold a query term: a zero BM25 score is no match, however it ranks
        return _ranked(searched.items, joint_scores(searched.keywords, query.terms), query.depth, floor=0.0)

    def lift(self, relevance: float, score: float) -> float:
        return relevance + self.share * score


class SlotRoute:
    name: ClassVar[str] = "slot"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        wanted = query_slots(query.text)
        return [
            (item, 1.0 if is_vital(item.slot) else ORDINARY_SLOT_LIFT)
            for item in searched.view.items
            if wanted and item.slot in wanted
        ]

    def lift(self, relevance: float, score: float) -> float:
        if score < 1.0:  # not found (0), or an ordinary slot (its lift)
            return relevance + score
        return max(relevance, SLOT_RELEVANCE_FLOOR + (1 - SLOT_RELEVANCE_FLOOR) * relevance)


class RelationRoute:
    name: ClassVar[str] = "relation"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        graph = searched.view.graph
        hops = graph.hops(graph.entities_in(query.text))
        return [(searched.view.by_id[memory_id], HOP_RELEVANCE[hop]) for memory_id, hop in hops.items()]

    def lift(self, relevance: float, score: float) -> float:
        return max(relevance, score)


class TimeRoute:
    name: ClassVar[str] = "time"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        period = named_period(query.text, query.now)
        if period is None:
            return []
        told = Period(period.start, period.end + TIME_SLACK)
        return [(item, 1.0) for item in searched.items if told.contains(item.created_at)]

    def lift(self, relevance: float, score: float) -> float:
        return relevance + TIME_SHARE * score


class RecencyRoute(_Candidates):
    name: ClassVar[str] = "recency"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        working = [i for i in searched.view.items if i.layer is Layer.WORKING]
        newest = sorted(working, key=lambda i: (i.created_at, i.memory_id))[-RECENT_COUNT:]
        return [(item, 0.0) for item in newest]


class ImportanceRoute(_Candidates):
    name: ClassVar[str] = "importance"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        longterm = [i for i in searched.view.items if i.layer is not Layer.WORKING]
        weighty = sorted(longterm, key=lambda i: (i.importance, i.memory_id))[-IMPORTANT_COUNT:]
        return [(item, 0.0) for item in weighty]


class SessionRoute:
    name: ClassVar[str] = "session"

    def find(self, query: Query, searched: Searched, pool: Pool) -> Iterable[tuple[MemoryItem, float]]:
        relevances: dict[str, list[float]] = {}
        sessions: dict[str, list[MemoryItem]] = {}
        for found in pool:
            session = found.item.source_session_id
            if session is not None:
                relevances.setdefault(session, []).append(found.relevance)
                sessions.setdefault(session, []).append(found.item)
        support = {s: sum(sorted(found, reverse=True)[:SESSION_SUPPORT]) for s, found in relevances.items()}
        best = sorted(support, key=lambda s: (-support[s], s))[:SESSION_COUNT]
        return [(item, rank_score(rank)) for rank, session in enumerate(best) for item in sessions[session]]

    def lift(self, relevance: float, score: float) -> float:
        return relevance + SESSION_SHARE * score


#: the routes in the order they run; relevance folds their lifts in this order
DEFAULT_ROUTES: tuple[Route, ...] = (
    SemanticRoute(),
    KeywordRoute(),
    SlotRoute(),
    RelationRoute(),
    TimeRoute(),
    RecencyRoute(),
    ImportanceRoute(),
    SessionRoute(),
)
