"""One user's memories as recall reads them, kept in memory beside the gate engine: the active items with
their vectors as one normalized float32 matrix, the BM25 postings of their words, the entity graph, and —
loaded on first need — the archive with its vectors in float16 (docs/architecture.md, "In-memory routes").

The bounded gate caps the active items (1,250 by default), so the semantic route over them is one matrix
product and the keyword route one BM25 pass: no vector-index call on the hot path. Each structure is built
lazily and kept until the items change (``ActiveView`` is replaced when the service's generation moves),
so a recall never rebuilds what the previous one built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property

import numpy as np

from actors.core.memory import MemoryItem
from actors.core.relations import EntityGraph
from actors.language.keywords import BM25, tokenize
from schemas.enums import Layer, State


def stacked(items: list[MemoryItem], dim: int, dtype: type = np.float32) -> np.ndarray:
    """The items' stored embeddings as rows (a zero row where one is missing or of another size)."""
    matrix = np.zeros((len(items), dim), dtype=dtype)
    for row, item in enumerate(items):
        if item.embedding is not None and len(item.embedding) == 4 * dim:
            matrix[row] = np.frombuffer(item.embedding, dtype=np.float32)
    return matrix


def top(scores: np.ndarray, depth: int) -> np.ndarray:
    """Indices of the ``depth`` best scores, best first (ties by position, so rankings are stable)."""
    if len(scores) > depth:
        chosen = np.argpartition(-scores, depth)[:depth]
        return chosen[np.lexsort((chosen, -scores[chosen]))]
    return np.lexsort((np.arange(len(scores)), -scores))


class ActiveView:
    """The active items at one generation, and what recall derives from them."""

    def __init__(self, items: list[MemoryItem], dim: int):
        self.items = items
        self.dim = dim
        self.by_id = {item.memory_id: item for item in items}

    @cached_property
    def matrix(self) -> np.ndarray:
        return stacked(self.items, self.dim)

    @cached_property
    def keywords(self) -> BM25:
        return BM25([tokenize(item.content) for item in self.items])

    @cached_property
    def graph(self) -> EntityGraph:
        return EntityGraph.from_items(self.items)

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of the vector to each item, in ``items`` order."""
        return self.matrix @ vector if self.items else np.zeros(0, dtype=np.float32)

    def nearest(self, vector: np.ndarray, depth: int) -> list[tuple[str, float]]:
        scores = self.similarities(vector)
        return [(self.items[n].memory_id, float(scores[n])) for n in top(scores, depth)]


class ArchiveView:
    """The user's archived items (the newest ``limit``), loaded once from SQL and then kept in step with
    every change the service commits; vectors in float16, half the bytes, the same ranking to ~1e-3."""

    def __init__(self, load: Callable[[], list[MemoryItem]], dim: int):
        self.dim = dim
        self.items: dict[str, MemoryItem] = {item.memory_id: item for item in load()}
        self._matrix: tuple[list[MemoryItem], np.ndarray] | None = None
        #: BM25 over the active items of one view followed by the archive, kept while neither changes
        self._joint: tuple[ActiveView, BM25] | None = None

    def apply(self, changed: Iterable[MemoryItem], forgotten: Iterable[str] = ()) -> None:
        for item in changed:
            if item.layer is Layer.ARCHIVE and item.state is State.ARCHIVED:
                self.items[item.memory_id] = item
            elif self.items.pop(item.memory_id, None) is None:
                continue
            self._matrix = self._joint = None
        for memory_id in forgotten:
            if self.items.pop(memory_id, None) is not None:
                self._matrix = self._joint = None

    def rows(self) -> tuple[list[MemoryItem], np.ndarray]:
        if self._matrix is None:
            items = list(self.items.values())
            self._matrix = (items, stacked(items, self.dim, np.float16))
        return self._matrix

    def keywords_with(self, view: ActiveView) -> BM25:
        """The keyword index of the view's active items followed by the archive's (``rows()`` order)."""
        if self._joint is None or self._joint[0] is not view:
            archived, _ = self.rows()
            self._joint = (view, BM25([tokenize(i.content) for i in view.items + archived]))
        return self._joint[1]

    def scored(self, vector: np.ndarray) -> tuple[list[MemoryItem], np.ndarray]:
        items, matrix = self.rows()
        if not items:
            return [], np.zeros(0)
        return items, (matrix @ vector.astype(np.float16)).astype(np.float32)
