"""One user's memories as recall reads them, kept in memory beside the gate engine: the active items with
their vectors as int16 rows (``VectorRows``), the BM25 postings of their words, the entity graph, and —
loaded on first need — the newest part of the archive (up to the policy's ``archive_memory_items``) with its
vectors in int8 and postings of its own (docs/architecture.md, "In-memory routes"). An archive beyond that
budget is reached through a ``DeepArchive`` (the vector index and SQL), and only when a query needs it.

The bounded gate caps the active items (1,250 by default), so the semantic route over them is one matrix
product and the keyword route one BM25 pass: no vector-index call on the hot path. Each structure is built
lazily and kept until its items change (``ActiveView`` is replaced when the service's generation moves; the
archive's structures when an item enters or leaves it), and texts already tokenized are not tokenized again,
so a recall never rebuilds what the previous one built.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Protocol

import numpy as np

from actors.core.memory import MemoryItem
from actors.core.recall.vectors import Rows, VectorRows, item_vector
from actors.core.relations import EntityGraph
from actors.language.keywords import BM25, tokenize
from actors.language.periods import Period
from schemas.enums import Layer, State

#: what a word of a memory's context (``actors.core.said_before``) counts for in the keyword route, against
#: one of its own words (tuned on LoCoMo's conv-26, 30 and 41: docs/locomo.md)
CONTEXT_WEIGHT = 0.7


def recall_text(item: MemoryItem) -> str:
    """What the keyword route matches as the memory's own words: the memory followed by the turn it was said
    in — the whole turn it was cut from, or itself when it is the whole turn, so that every memory's own
    words weigh alike. Its context is matched beside them, at ``CONTEXT_WEIGHT``."""
    return f"{item.content} {item.source_text or item.content}"


#: an item's words as the keyword route reads them: its own (``recall_text``) and its context's
Words = tuple[tuple[str, ...], tuple[str, ...]]
#: the strings an item's words are read from
_Said = tuple[str, str | None, str | None]


def keyword_index(documents: list[Words]) -> BM25:
    """One BM25 index over items' words, their context counted at ``CONTEXT_WEIGHT``."""
    return BM25(
        [own for own, _ in documents],
        context=[context for _, context in documents],
        context_weight=CONTEXT_WEIGHT,
    )


class Tokenized:
    """Token lists of recall texts, kept from one build of a keyword index to the next: only texts new since
    the last build are tokenized (jieba and stemming are most of an index's build time)."""

    def __init__(self) -> None:
        #: keyed by the item's own strings (references), not by the recall text they make
        self._known: dict[_Said, Words] = {}

    def documents(self, items: Iterable[MemoryItem]) -> list[Words]:
        """The items' token lists; what no item among them says any more is forgotten."""
        known: dict[_Said, Words] = {}
        documents = self._lookup(items, known)
        self._known = known
        return documents

    def more(self, items: Iterable[MemoryItem]) -> list[Words]:
        """The items' token lists, remembered beside the others (``documents`` forgets what is stale)."""
        return self._lookup(items, self._known)

    def _lookup(self, items: Iterable[MemoryItem], known: dict[_Said, Words]) -> list[Words]:
        documents: list[Words] = []
        for item in items:
            key = (item.content, item.source_text, item.context)
            words = known.get(key) or self._known.get(key)
            if words is None:
                words = (tokenize(recall_text(item)), tokenize(item.context) if item.context else ())
            known[key] = words
            documents.append(words)
        return documents


#: an item as a keyword index read it: its id and the words recall reads
_ReadAs = tuple[str, str, str | None, str | None]


def _read_as(item: MemoryItem) -> _ReadAs:
    return (item.memory_id, item.content, item.source_text, item.context)


@dataclass(frozen=True)
class _Index:
    """A BM25 index over some items, and the row of each item as it read it."""

    keywords: BM25
    rows: dict[_ReadAs, int]

    @classmethod
    def build(cls, items: list[MemoryItem], documents: list[Words]) -> _Index:
        return cls(keyword_index(documents), {_read_as(item): row for row, item in enumerate(items)})


_NO_INDEX = _Index(BM25([]), {})


class ActiveKeywords:
    """The active items' keyword postings, kept from one ``ActiveView`` to the next (a view is replaced on
    every change, and rebuilding BM25 over a long-lived user's memories was the largest part of the
    service's own work in the recall after a write: docs/benchmarks.md, seventh round). Two indexes, as in
    the archive: the items as they settled, and those new or changed since, rebuilt when they change (they
    are few). An item that leaves or changes is masked out of the settled index, not rebuilt; the settled
    index is built again over all the items once the recent one would hold ``MERGE_AT`` items or a quarter
    of the settled rows are masked.

    The scores are those of one BM25 over the view's items, by construction: a view's postings
    (``ViewPostings``) count only the rows of its items, so the document count, the average length and
    every document frequency are theirs."""

    MERGE_AT = 64

    def __init__(self) -> None:
        self._tokenized = Tokenized()
        self._settled = self._recent = _NO_INDEX

    def over(self, items: list[MemoryItem]) -> ViewPostings:
        """The postings of exactly these items, in this order."""
        read_as = [_read_as(item) for item in items]
        settled = np.fromiter((self._settled.rows.get(key, -1) for key in read_as), np.int64, len(items))
        fresh = np.flatnonzero(settled < 0)
        masked = len(self._settled.rows) - (len(items) - len(fresh))
        if len(fresh) >= self.MERGE_AT or 4 * masked > len(self._settled.rows):
            self._settled = _Index.build(items, self._tokenized.documents(items))
            self._recent = _NO_INDEX
            settled, fresh = np.arange(len(items)), fresh[:0]
        elif len(fresh) != len(self._recent.rows) or any(read_as[n] not in self._recent.rows for n in fresh):
            new = [items[n] for n in fresh]
            self._recent = _Index.build(new, self._tokenized.more(new))
        recent = np.full(len(items), -1, dtype=np.int64)
        recent[fresh] = [self._recent.rows[read_as[n]] for n in fresh]
        return ViewPostings([(self._settled.keywords, settled), (self._recent.keywords, recent)])


class ViewPostings:
    """The ``Postings`` of a view's items over the indexes that hold them: ``parts`` pairs each index with
    its row for every view position (-1: not in that index); the rows no position names are masked out."""

    def __init__(self, parts: list[tuple[BM25, np.ndarray]]):
        self.size = len(parts[0][1])
        self.k1, self.b = parts[0][0].k1, parts[0][0].b
        self.lengths = np.zeros(self.size)
        #: per index: the view position of each of its rows (-1: masked)
        self._positions: list[tuple[BM25, np.ndarray]] = []
        for index, rows in parts:
            at = np.flatnonzero(rows >= 0)
            held = rows[at]
            positions = np.full(index.size, -1, dtype=np.int64)
            positions[held] = at
            self.lengths[at] = index.lengths[held]
            self._positions.append((index, positions))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        documents, counts = [], []
        for index, positions in self._positions:
            found = index.postings(term)
            if found is not None:
                at = positions[found[0]]
                held = at >= 0
                documents.append(at[held])
                counts.append(found[1][held])
        if not documents:
            return None
        joined = np.concatenate(documents), np.concatenate(counts)
        return joined if len(joined[0]) else None


def top(scores: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` best scores, best first (ties by position, so rankings are stable)."""
    if len(scores) > depth:
        chosen = np.argpartition(-scores, depth)[:depth]
        return chosen[np.lexsort((chosen, -scores[chosen]))]
    return np.lexsort((np.arange(len(scores)), -scores))


class ActiveView:
    """The active items at one generation, and what recall derives from them."""

    def __init__(
        self,
        items: list[MemoryItem],
        dim: int,
        keywords: ActiveKeywords | None = None,
        vectors: VectorRows | None = None,
    ):
        """``keywords``: the active items' postings as the previous generation's view left them;
        ``vectors``: the rows that hold the items' vectors (an item still carrying its own bytes, not yet
        stored, is added to them)."""
        self.items = items
        self.dim = dim
        self.by_id = {item.memory_id: item for item in items}
        self._keywords = keywords or ActiveKeywords()
        self._vectors = vectors or VectorRows(dim)

    @cached_property
    def matrix(self) -> Rows:
        for item in self.items:
            carried = item_vector(item, self.dim)
            if carried is not None:
                self._vectors.put(item.memory_id, item.content_hash, carried)
        return self._vectors.rows([item.memory_id for item in self.items])

    @cached_property
    def keywords(self) -> ViewPostings:
        return self._keywords.over(self.items)

    @cached_property
    def graph(self) -> EntityGraph:
        return EntityGraph.from_items(self.items)

    def build(self) -> None:
        """Every structure now, rather than when a recall first reads it."""
        _ = self.matrix, self.keywords, self.graph

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of the vector to each item, in ``items`` order."""
        return self.matrix @ vector if self.items else np.zeros(0, dtype=np.float32)

    def nearest(self, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        """The items whose embeddings are closest to the vector: the gate's restatement candidates."""
        scores = self.similarities(vector)
        return [(self.items[n].memory_id, float(scores[n])) for n in top(scores, depth)]


@dataclass
class ArchivePart:
    """Archived items with their vectors and keyword postings, in one order."""

    items: list[MemoryItem]
    vectors: Rows
    keywords: BM25
    rows: dict[str, int]

    @classmethod
    def build(cls, items: list[MemoryItem], vectors: VectorRows, tokenized: Tokenized) -> ArchivePart:
        """``vectors``: the rows holding the items' vectors."""
        ids = [item.memory_id for item in items]
        return cls(
            items,
            vectors.rows(ids),
            keyword_index(tokenized.documents(items)),
            {memory_id: row for row, memory_id in enumerate(ids)},
        )


class DeepArchive(Protocol):
    """The user's archived items beyond what memory holds, searched where they are stored."""

    def nearest(self, vector: np.ndarray, depth: int, held: Collection[str] = ()) -> list[MemoryItem]:
        """Of the ``depth`` archived items nearest the vector over the whole archive, those not ``held``
        (memory scores those itself: they need not be read back)."""
        ...

    def told_within(self, period: Period, depth: int) -> list[MemoryItem]:
        """Up to ``depth`` archived items said within the period (newest first)."""
        ...


@dataclass(frozen=True)
class Reach:
    """Why a recall reads the archive beyond memory: the in-memory recall is weak (no searched item is as
    similar to the query as the policy's ``archive_search_below``), or the question names a period that
    begins before the oldest archived item memory holds."""

    weak: bool
    old_period: bool

    def __bool__(self) -> bool:
        return self.weak or self.old_period


def _reads_alike(old: MemoryItem, new: MemoryItem) -> bool:
    """Whether recall reads the same words in the two versions of an item (a change of heat, say, is not
    seen; a vector changed in place is seen by the part at once)."""
    return (old.content, old.source_text, old.context) == (new.content, new.source_text, new.context)


class ArchiveView:
    """The user's newest archived items (``budget`` of them), loaded once from SQL and then kept in step with
    every change the service commits; the rest of the archive, if any, through ``deep``. Kept in two parts:
    the archive as it settled and what entered it since, so that the item a write evicts costs a rebuild of
    the small part only; a part is rebuilt when one of its items leaves it or changes what recall reads, and
    the recent part joins the settled one once it holds ``MERGE_AT`` items — the moment the oldest items
    beyond the budget leave memory (so memory holds at most ``budget + MERGE_AT`` archived items). The items'
    vectors are held once, as int8 rows (``VectorRows``): the items the view loads or takes in drop their own
    bytes."""

    MERGE_AT = 256

    def __init__(
        self,
        load: Callable[[int], list[MemoryItem]],
        dim: int,
        budget: int,
        deep: DeepArchive | None = None,
        known: Callable[[MemoryItem], np.ndarray | None] = lambda item: None,
    ):
        """``load(limit)``: the newest ``limit`` stored archived items, most recently archived first;
        ``known``: the vector of an item that enters without its own bytes (the active rows held it)."""
        self.dim = dim
        self.budget = budget
        self.deep = deep
        self._known = known
        self.vectors = VectorRows(dim, np.int8, capacity=min(budget, 4096) + 1)
        loaded = load(budget + 1)
        #: whether memory holds the whole archive (then nothing is searched beyond it)
        self.complete = len(loaded) <= budget
        self.items: dict[str, MemoryItem] = {item.memory_id: item for item in loaded[:budget]}
        self.vectors.hold(self.items.values())
        self._tokenized = {"settled": Tokenized(), "recent": Tokenized()}
        self._settled: list[str] = list(self.items)
        self._recent: list[str] = []
        self._built: dict[str, ArchivePart | None] = {"settled": None, "recent": None}

    def apply(self, changed: Iterable[MemoryItem], forgotten: Iterable[str] = ()) -> None:
        for item in changed:
            old = self.items.get(item.memory_id)
            if item.layer is Layer.ARCHIVE and item.state is State.ARCHIVED:
                self.items[item.memory_id] = item
                self._take_vector(item)
                if old is None:
                    self._enter(item.memory_id)
                elif _reads_alike(old, item):
                    self._replace(item)
                else:
                    self._rebuild_holder(item.memory_id)
            elif old is not None:
                del self.items[item.memory_id]
                self._rebuild_holder(item.memory_id)
                self.vectors.drop(item.memory_id)
        for memory_id in forgotten:
            if self.items.pop(memory_id, None) is not None:
                self._rebuild_holder(memory_id)
                self.vectors.drop(memory_id)

    def newest_ids(
        self, *, content_hash: str | None = None, slot: str | None = None, limit: int
    ) -> list[str]:
        """The held archived items with this content hash and/or slot, most recently archived first (as
        ``Memories.archived`` orders them): all there are while ``complete``."""
        found = [
            item
            for item in self.items.values()
            if (content_hash is None or item.content_hash == content_hash)
            and (slot is None or item.slot == slot)
        ]
        found.sort(key=lambda item: item.memory_id)
        found.sort(
            key=lambda item: (item.archived_at is not None, item.archived_at or datetime.min), reverse=True
        )
        return [item.memory_id for item in found[:limit]]

    def _take_vector(self, item: MemoryItem) -> None:
        """The entering (stored) item's vector into the rows, from its own bytes or the active rows."""
        vector = item_vector(item, self.dim)
        if vector is None and not self.vectors.holds(item):
            vector = self._known(item)
        if vector is not None:
            self.vectors.put(item.memory_id, item.content_hash, vector)
        item.embedding = None

    def _enter(self, memory_id: str) -> None:
        if memory_id in self._settled or memory_id in self._recent:
            # it left and came back before its part was rebuilt: that rebuild takes it in again
            self._rebuild_holder(memory_id)
            return
        self._recent.append(memory_id)
        self._built["recent"] = None
        if len(self._recent) >= self.MERGE_AT:
            self._settled += self._recent
            self._recent = []
            self._built = {"settled": None, "recent": None}
            self._keep_newest()

    def _keep_newest(self) -> None:
        """Hand the oldest archived items beyond the budget over to the deep archive."""
        if len(self.items) <= self.budget:
            return
        oldest_first = sorted(self.items.values(), key=lambda i: (i.archived_at or i.created_at, i.memory_id))
        for item in oldest_first[: len(self.items) - self.budget]:
            del self.items[item.memory_id]
            self.vectors.drop(item.memory_id)
        self.complete = False

    def _replace(self, item: MemoryItem) -> None:
        for part in self._built.values():
            if part is not None and item.memory_id in part.rows:
                part.items[part.rows[item.memory_id]] = item

    def _rebuild_holder(self, memory_id: str) -> None:
        for name, ids in (("settled", self._settled), ("recent", self._recent)):
            if memory_id in ids:
                self._built[name] = None

    def parts(self) -> list[ArchivePart]:
        """The in-memory archive's parts, each built on first need after it changed."""
        parts = []
        for name, ids in (("settled", self._settled), ("recent", self._recent)):
            part = self._built[name]
            if part is None:
                # an item that left marked its part for this rebuild: the ids shed it only here
                ids[:] = [memory_id for memory_id in ids if memory_id in self.items]
                part = self._built[name] = ArchivePart.build(
                    [self.items[memory_id] for memory_id in ids], self.vectors, self._tokenized[name]
                )
            parts.append(part)
        return parts

    def reach(self, best_similarity: float, told: Period | None, weak_below: float) -> Reach:
        """Whether a query reads beyond memory: never when memory holds the whole archive (or nothing holds
        the rest); else when ``best_similarity`` (the best of the items searched in memory) is below
        ``weak_below``, or the period it names (``told``: as the time route reads it) begins before the
        oldest archived item held here was said."""
        if self.complete or self.deep is None:
            return Reach(weak=False, old_period=False)
        oldest = min((item.created_at for item in self.items.values()), default=None)
        return Reach(
            weak=best_similarity < weak_below,
            old_period=told is not None and (oldest is None or told.start < oldest),
        )

    def beyond(self, reach: Reach, vector: np.ndarray, told: Period | None, depth: int) -> ArchivePart | None:
        """The archived items beyond memory that this query reaches (none held here), as a part of their
        own: the ``depth`` nearest the vector over the whole archive when recall is weak, those said within
        the named period when it is old."""
        if not reach or self.deep is None:
            return None
        found: dict[str, MemoryItem] = {}
        if reach.weak:
            nearest = self.deep.nearest(vector, depth, held=self.items.keys())
            found.update((item.memory_id, item) for item in nearest)
        if reach.old_period and told is not None:
            found.update((item.memory_id, item) for item in self.deep.told_within(told, depth))
        items = [item for memory_id, item in found.items() if memory_id not in self.items]
        if not items:
            return None
        vectors = VectorRows(self.dim, np.int8, capacity=len(items) + 1)
        for item in items:  # read from SQL for this query: they keep their own bytes
            carried = item_vector(item, self.dim)
            if carried is not None:
                vectors.put(item.memory_id, item.content_hash, carried)
        return ArchivePart.build(items, vectors, Tokenized())
