"""The one copy in memory of the vectors a user's recall holds: rows of a matrix keyed by memory id.

A resident user's items arrive from SQL with their embedding as float32 bytes; kept beside the recall
matrix, each vector was held twice (~3 KB of an active item's ~5.7 KB). ``VectorRows`` takes the vector of
every item once it is stored (loaded from SQL, or just committed) and drops the item's own bytes
(``hold``); recall, the gate's near-duplicate check and the merge of summaries read it here by memory id.
A row remembers the content hash it was embedded for, so an item whose content changed is not answered with
its old vector. An item without bytes whose row is held still has its vector in SQL: the store's UPDATE
keeps a stored embedding when the item carries none (``actors.store.sql.commit``).

Rows are integer codes with one scale per row (the row's largest magnitude maps to the type's largest code).
Two precisions: int16 for the active items (half float32's bytes, scores within ~1e-5 of the exact cosine,
so the gate's restatement threshold reads them as it would the float32 vector), and int8 for the in-memory
archive (a quarter of the bytes, scores within ~1e-3). Products run on float32 blocks of the rows asked for:
numpy converts int16 and int8 to float32 as fast as it copies float32 rows, while float16 converts ~10×
slower (0.10 against 0.09 ms and 0.9 ms for a product over 1,254 rows: docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import overload

import numpy as np

from actors.core.memory import MemoryItem

BLOCK = 512


def item_vector(item: MemoryItem, dim: int) -> np.ndarray | None:
    """The vector the item carries itself (float32 bytes of this size), or None."""
    blob = item.embedding
    return np.frombuffer(blob, dtype=np.float32) if blob is not None and len(blob) == 4 * dim else None


def vector_bytes(vector: np.ndarray) -> bytes:
    """A vector as an item stores it (``MemoryItem.embedding``): float32 bytes, read by ``item_vector``."""
    return np.asarray(vector, dtype=np.float32).tobytes()


@overload
def as_vector(blob: bytes) -> np.ndarray: ...


@overload
def as_vector(blob: bytes | None) -> np.ndarray | None: ...


def as_vector(blob: bytes | None) -> np.ndarray | None:
    """Stored float32 bytes (a row's embedding, of any size) as a vector, or None."""
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


class VectorRows:
    """Vectors keyed by memory id in one matrix that grows by a quarter (or to what ``hold`` takes at once);
    a freed row is reused. Row 0 is all zeros: what an item without a vector scores."""

    def __init__(self, dim: int, codes: type[np.signedinteger] = np.int16, capacity: int = 64):
        self.dim = dim
        self._top = float(np.iinfo(codes).max)
        self._codes = np.zeros((max(capacity, 2), dim), dtype=codes)
        self._scales = np.ones(len(self._codes), dtype=np.float32)
        self._row: dict[str, int] = {}
        self._digest: dict[str, str] = {}
        self._free: list[int] = []
        self._used = 1

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, memory_id: object) -> bool:
        return memory_id in self._row

    @property
    def nbytes(self) -> int:
        return self._codes.nbytes + self._scales.nbytes

    def put(self, memory_id: str, digest: str, vector: np.ndarray) -> None:
        """Hold the vector of this memory's content (``digest``: its content hash)."""
        row = self._row.get(memory_id)
        if row is None:
            row = self._free.pop() if self._free else self._grow()
            self._row[memory_id] = row
        self._digest[memory_id] = digest
        scale = float(np.abs(vector).max()) / self._top or 1.0
        self._codes[row] = np.round(vector / scale)
        self._scales[row] = scale

    def _grow(self) -> int:
        if self._used == len(self._codes):
            self._reserve(len(self._codes) + max(16, len(self._codes) // 4))
        self._used += 1
        return self._used - 1

    def _reserve(self, rows: int) -> None:
        if rows <= len(self._codes):
            return
        grown = np.zeros((rows, self.dim), dtype=self._codes.dtype)
        grown[: self._used] = self._codes[: self._used]
        scales = np.ones(rows, dtype=np.float32)
        scales[: self._used] = self._scales[: self._used]
        self._codes, self._scales = grown, scales

    def hold(self, items: Iterable[MemoryItem]) -> None:
        """Take the vectors of stored items (their bytes are in SQL) and drop the items' own copies."""
        items = list(items)
        self._reserve(self._used + len(items) - len(self._free))
        for item in items:
            vector = item_vector(item, self.dim)
            if vector is not None:
                self.put(item.memory_id, item.content_hash, vector)
                item.embedding = None

    def holds(self, item: MemoryItem) -> bool:
        """Whether a row holds the vector of the item's current content."""
        return self._digest.get(item.memory_id) == item.content_hash

    def vector(self, memory_id: str) -> np.ndarray | None:
        """A copy of the memory's vector (float32), or None."""
        row = self._row.get(memory_id)
        if row is None:
            return None
        vector: np.ndarray = self._codes[row].astype(np.float32) * self._scales[row]
        return vector

    def drop(self, memory_id: str) -> None:
        row = self._row.pop(memory_id, None)
        self._digest.pop(memory_id, None)
        if row is not None:
            self._codes[row] = 0
            self._free.append(row)

    def keep_only(self, memory_ids: Iterable[str]) -> None:
        """Free the rows of every memory not named."""
        kept = set(memory_ids)
        for memory_id in [m for m in self._row if m not in kept]:
            self.drop(memory_id)

    def rows(self, memory_ids: Sequence[str]) -> Rows:
        """These memories' vectors, in this order, for products (a memory without one scores 0)."""
        return Rows(self, np.fromiter((self._row.get(m, 0) for m in memory_ids), np.int64, len(memory_ids)))


class Rows:
    """Some rows of a ``VectorRows``, by index: ``rows @ vector`` scores them, without a copy of the rows
    kept (rows updated in place are seen at once)."""

    def __init__(self, table: VectorRows, index: np.ndarray):
        self._table = table
        self._index = index

    def __len__(self) -> int:
        return len(self._index)

    def __matmul__(self, vector: np.ndarray) -> np.ndarray:
        table = self._table
        scores = np.empty(len(self._index), dtype=np.float32)
        for start in range(0, len(self._index), BLOCK):
            chosen = self._index[start : start + BLOCK]
            block = table._codes[chosen].astype(np.float32)
            scores[start : start + BLOCK] = (block @ vector) * table._scales[chosen]
        return scores
