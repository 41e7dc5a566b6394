"""Keyword side of recall: BM25 over the tokenizer's terms (``actors.language.tokens``, re-exported here as
``tokenize``), and the query → profile-slot map that lets a question about cooking reach the allergy slot
however cold it is.
"""

from collections.abc import Sequence
from itertools import chain
from typing import Protocol

import numpy as np

from actors.language.en.tokens import words
from actors.language.markers import reading
from actors.language.packs import packs
from actors.language.tokens import tokenize

__all__ = ["BM25", "Postings", "asks_about_the_past", "joint_scores", "query_slots", "tokenize"]


class Postings(Protocol):
    """What BM25 scoring reads of an index of ``size`` documents: their lengths in tokens and, per term,
    the documents holding it (indices below ``size``) with its count in each."""

    k1: float
    b: float
    size: int
    lengths: np.ndarray

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None: ...


class BM25:
    """Okapi BM25 over tokenized documents, with postings built once: scoring a query touches only the
    documents that hold its terms, so one index serves every query until the documents change. The postings
    are two flat arrays (documents, counts) cut by term: a resident user holds one index per part of its
    memory, and two small arrays per term took three times the bytes (docs/benchmarks.md)."""

    def __init__(
        self,
        documents: Sequence[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        *,
        context: Sequence[Sequence[str]] = (),
        context_weight: float = 1.0,
    ):
        """``context``: words around each document (as many lists as documents, or none), each counted
        ``context_weight`` of a document's own word, in its term counts and its length alike."""
        self.k1, self.b = k1, b
        self.size = len(documents)
        counts: dict[str, dict[int, float]] = {}
        lengths = np.zeros(self.size, dtype=np.float64)
        for field, weight in ((documents, 1.0), (context, context_weight)):
            for n, doc in enumerate(field):
                lengths[n] += weight * len(doc)
                for term in doc:
                    per_doc = counts.setdefault(term, {})
                    per_doc[n] = per_doc.get(n, 0.0) + weight
        self.lengths = lengths
        per_term = list(counts.values())
        sizes = [len(per_doc) for per_doc in per_term]
        total = sum(sizes)
        self._terms = {term: n for n, term in enumerate(counts)}
        self._starts = np.cumsum([0, *sizes], dtype=np.int64)
        self._documents = np.fromiter(chain.from_iterable(per_term), np.int32, total)
        self._counts = np.fromiter(chain.from_iterable(d.values() for d in per_term), np.float32, total)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The documents holding the term and its count in each, or None."""
        n = self._terms.get(term)
        if n is None:
            return None
        start, stop = self._starts[n], self._starts[n + 1]
        return self._documents[start:stop], self._counts[start:stop]

    def scores(self, query: Sequence[str]) -> np.ndarray:
        return joint_scores([self], query)


def joint_scores(parts: Sequence[Postings], query: Sequence[str]) -> np.ndarray:
    """BM25 scores of the parts' documents one after the other, with the statistics (document count, average
    length, document frequencies) of all of them together: the scores of one index over the concatenation,
    while each part is built and kept on its own (the archive changes far less often than active memory)."""
    size = sum(part.size for part in parts)
    result = np.zeros(size)
    total_length = float(sum(part.lengths.sum() for part in parts))
    if not total_length:
        return result
    k1, b = parts[0].k1, parts[0].b
    average = total_length / size
    offsets = np.cumsum([0] + [part.size for part in parts[:-1]])
    for term in set(query):
        found = [
            (offset, part, postings)
            for offset, part in zip(offsets, parts, strict=True)
            if (postings := part.postings(term)) is not None
        ]
        frequency = sum(len(docs) for _, _, (docs, _) in found)
        if not frequency:
            continue
        idf = float(np.log(1 + (size - frequency + 0.5) / (frequency + 0.5)))
        for offset, part, (docs, counts) in found:
            norm = k1 * (1 - b + b * part.lengths[docs] / average)
            result[offset + docs] += idf * counts * (k1 + 1) / (counts + norm)
    return result


#: the slot cues and past-tense question words of every language pack (``actors.language.<code>.markers``)
_MARKERS = reading(packs())


def query_slots(query: str) -> frozenset[str]:
    """Profile slots a query is about, from cue words (English tokens and Chinese substrings)."""
    lowered = query.casefold()
    cue_words = set(words(lowered))
    found: set[str] = set()
    for cues, slots in _MARKERS.slot_cues:
        if any((cue in cue_words) if cue.isascii() else (cue in lowered) for cue in cues):
            found.update(slots)
    return frozenset(found)


def asks_about_the_past(query: str) -> bool:
    """Whether a question asks what happened ("When did Ana move?", "我上次说过什么？") rather than how things
    stand now: for such a question an older memory is not a staler one."""
    return bool(_MARKERS.past_question.search(query))
