"""What recall keeps for one user between calls, all of it derived from the committed items or the user's
questions: the active items' view (their vector rows, keyword postings and entity graph), the newest part
of the archive read from SQL (the rest reached through the vector index, ``actors.app.archive``), and the
vectors of the queries the user asked lately.

``RecallState`` changes only in two ways: a recall reads what it lacks, and a commit of the user's unit of
work (``actors.app.unit_of_work``) tells it what changed (``on_commit``: items stored, the memory loaded
again, the user erased), and it drops or updates what the change made stale.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Collection
from datetime import datetime

import numpy as np

from actors.adapters.embedding import Embedder
from actors.adapters.tracing import span
from actors.app.archive import IndexedArchive
from actors.app.unit_of_work import CommitEvent, Erased, Loaded, Stored
from actors.core.gate.engine import GateEngine
from actors.core.memory import Candidate, MemoryItem, content_hash
from actors.core.recall.engine import Hit, RecallEngine
from actors.core.recall.vectors import VectorRows, item_vector
from actors.core.recall.view import ActiveKeywords, ActiveView, ArchiveView
from actors.store.sql.store import MemoryStore
from actors.store.vectors.index import VectorIndex
from schemas.settings import GatePolicy

#: recent query vectors kept per user: an agent often asks the same thing again within a session
QUERY_CACHE_SIZE = 32
#: rough bytes of an archived item held in memory: its record, texts, keyword postings and entity-graph
#: share (calibrated with tracemalloc on seeded users: docs/benchmarks.md)
ARCHIVED_ITEM_BYTES = 1350
#: a context is the one text whose size varies most (none to two turns): its string, its tokens and its
#: keyword postings take about 4 bytes a character (tracemalloc, items of two 150-character turns)
CONTEXT_BYTES_PER_CHAR = 4


def held_bytes(items: Collection[MemoryItem], per_item: int) -> int:
    """Rough bytes of ``items`` held in memory: ``per_item`` each, and their contexts."""
    contexts = sum(len(item.context) for item in items if item.context)
    return len(items) * per_item + CONTEXT_BYTES_PER_CHAR * contexts


class ForkedViews:
    """Near-duplicates on a fork of the user's engine (a preview): its own copy of the vector rows, where
    its views keep the vectors of what the fork changed."""

    def __init__(self, rows: VectorRows):
        self._rows = rows

    def active_view(self, engine: GateEngine) -> ActiveView:
        return ActiveView(engine.active(), self._rows.dim, vectors=self._rows)

    changed_view = active_view


class RecallState:
    def __init__(
        self,
        tenant_id: str,
        user_id: str,
        *,
        store: MemoryStore,
        embedder: Embedder,
        policy: GatePolicy,
        vector_index: Callable[[], VectorIndex] | None = None,
    ):
        """``vector_index``: the index (connected on first call) that recall searches for the part of a
        large archive beyond ``policy.archive_memory_items``; without it recall reads only what memory
        holds."""
        self.tenant_id = tenant_id
        self.user_id = user_id
        self.store = store
        self.embedder = embedder
        self.policy = policy
        self._deep_archive = (
            None if vector_index is None else IndexedArchive(tenant_id, user_id, store, vector_index)
        )
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._view: ActiveView | None = None
        self._keywords = ActiveKeywords()
        self._vectors = VectorRows(embedder.dim)
        self._archive: ArchiveView | None = None
        #: whether this user has recalled since activation (then a change's rebuild is worth doing early)
        self._recalls = False

    # ------------------------------------------------------------------------------ commits

    def on_commit(self, event: CommitEvent) -> None:
        """What the user's unit of work committed: drop or update what the change made stale."""
        match event:
            case Stored(items=items, engine=engine):
                self._view = None
                if self._archive is not None:
                    self._archive.apply(items)
                self._vectors.hold(item for item in items if item.memory_id in engine.items)
            case Loaded(items=items):
                self._forget_derived()
                # stored: their vectors are in SQL, and from now on only in these rows
                self._vectors.hold(items)
            case Erased():
                self._forget_derived()
                self._queries.clear()  # the user's own questions go with them

    def _forget_derived(self) -> None:
        """A new engine: the recall structures derived from the old one's items go."""
        self._view = self._archive = None
        self._keywords = ActiveKeywords()
        self._vectors = VectorRows(self.embedder.dim)

    # ------------------------------------------------------------------------------ views

    def active_view(self, engine: GateEngine) -> ActiveView:
        """The engine's active items and their recall structures; rebuilt only after a commit changed them."""
        if self._view is None:
            self._view = self.changed_view(engine)
        return self._view

    def changed_view(self, engine: GateEngine) -> ActiveView:
        """A view of the engine's active items as a decision in progress left them (not committed yet):
        built on the rows and postings the committed view shares, and not kept."""
        self._vectors.keep_only(engine.items)  # what the engine still holds keeps its exact row
        return ActiveView(engine.active(), self.embedder.dim, self._keywords, self._vectors)

    def forked(self) -> ForkedViews:
        """Near-duplicates for a fork of the engine, on a copy of the active items' vector rows."""
        return ForkedViews(copy.deepcopy(self._vectors))

    def archive_view(self) -> ArchiveView:
        """The archive for recall: its newest ``archive_memory_items`` read from SQL on first need and kept in
        step afterwards, the rest through the vector index."""
        if self._archive is None:
            with span("sql.archived"):
                self._archive = ArchiveView(
                    self._newest_archived,
                    self.embedder.dim,
                    self.policy.archive_memory_items,
                    deep=self._deep_archive,
                    known=self.vector_of,
                )
        return self._archive

    def _newest_archived(self, limit: int) -> list[MemoryItem]:
        """The user's ``limit`` most recently archived items."""
        return self.store.memories.archived(self.tenant_id, self.user_id, limit=limit)

    def archived_like(self, cand: Candidate) -> list[MemoryItem]:
        """Archived items the candidate may restate, so the gate can restore instead of duplicating. When
        memory already holds the whole archive (a recall loaded it) it names them, and SQL is read only for
        those (the two searches in SQL were a fifth of a write's CPU, and most writes restate nothing
        archived); a write does not load the archive into memory for this."""
        digest, slot = content_hash(cand.content), cand.slot if cand.slot and cand.value else None
        memories, archive = self.store.memories, self._archive
        if archive is not None and archive.complete:
            ids = archive.newest_ids(content_hash=digest, limit=1)
            ids += archive.newest_ids(slot=slot, limit=20) if slot else []
            if not ids:
                return []
            return memories.archived(self.tenant_id, self.user_id, memory_ids=ids, limit=len(ids))
        found = memories.archived(self.tenant_id, self.user_id, content_hash=digest, limit=1)
        return found + (memories.archived(self.tenant_id, self.user_id, slot=slot, limit=20) if slot else [])

    # ------------------------------------------------------------------------------ vectors

    def vector_of(self, item: MemoryItem) -> np.ndarray | None:
        """The item's vector: its own bytes, else the rows that hold it for its current content."""
        carried = item_vector(item, self.embedder.dim)
        if carried is not None:
            return carried
        for rows in self._held_by():
            if rows.holds(item):
                return rows.vector(item.memory_id)
        return None

    def holds(self, item: MemoryItem) -> bool:
        """Whether memory holds the stored vector of the item's content (then SQL has it too)."""
        return any(rows.holds(item) for rows in self._held_by())

    def _held_by(self) -> list[VectorRows]:
        return [self._vectors] if self._archive is None else [self._vectors, self._archive.vectors]

    @property
    def nbytes(self) -> int:
        """Rough bytes it holds beside the engine's items: the vector rows, and the archived items."""
        vectors = sum(rows.nbytes for rows in self._held_by())
        if self._archive is None:
            return vectors
        return vectors + held_bytes(self._archive.items.values(), ARCHIVED_ITEM_BYTES)

    # ------------------------------------------------------------------------------ recall

    def hits(
        self,
        engine: GateEngine,
        query: str,
        k: int,
        include_archive: bool,
        now: datetime,
        ahead: np.ndarray | None = None,
    ) -> list[Hit]:
        """The engine's memories that answer ``query``, best first; ``ahead``: the query's vector, when the
        host embedded it while the call waited."""
        query_vector = self._query_vector(query, ahead)
        self._recalls = True
        found = RecallEngine(
            self.active_view(engine), self.archive_view, self.policy, now, vector_of=self.vector_of
        )
        return found.recall(query, query_vector, k, include_archive)

    @property
    def is_stale(self) -> bool:
        """Whether a commit since this user's last recall dropped what recall derives from the items."""
        return self._recalls and self._view is None

    def prepare(self, engine: GateEngine) -> None:
        """Build now what the next recall would rebuild first after a commit (``Recalls.prepare``)."""
        self.active_view(engine).build()
        if self._archive is not None:
            self._archive.parts()

    def cached_query(self, query: str) -> np.ndarray | None:
        """The vector of a query this user asked lately. One dict read: a host may ask from its event loop
        while the user's call runs in a thread."""
        return self._queries.get(query)

    def _query_vector(self, query: str, ahead: np.ndarray | None) -> np.ndarray:
        """The query's vector: ``ahead``, else one of the user's recent queries, else embedded now; it joins
        the recent ones."""
        vector = self._queries.get(query) if ahead is None else ahead
        if vector is None:
            with span("embedder.embed_queries"):
                vector = np.asarray(self.embedder.embed_queries([query]), dtype=np.float32)[0]
        self._queries[query] = vector
        self._queries.move_to_end(query)
        if len(self._queries) > QUERY_CACHE_SIZE:
            self._queries.popitem(last=False)
        return vector
