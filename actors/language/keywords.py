"""Keyword side of recall: BM25 over the tokenizer's terms (``actors.language.tokens``, re-exported here as
``tokenize``), and the query → profile-slot map that lets a question about cooking reach the allergy slot
however cold it is.
"""

from collections.abc import Sequence

import numpy as np

from actors.language.en.tokens import words
from actors.language.markers import reading
from actors.language.packs import packs
from actors.language.tokens import tokenize

__all__ = ["BM25", "asks_about_the_past", "query_slots", "tokenize"]


class BM25:
    """Okapi BM25 over tokenized documents, with postings built once: scoring a query touches only the
    documents that hold its terms, so one index serves every query until the documents change."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.size = len(documents)
        lengths = np.array([len(d) for d in documents], dtype=np.float64)
        average = float(lengths.mean()) if self.size else 0.0
        self._norm = k1 * (1 - b + b * lengths / average) if average else lengths
        counts: dict[str, dict[int, int]] = {}
        for n, doc in enumerate(documents):
            for term in doc:
                per_doc = counts.setdefault(term, {})
                per_doc[n] = per_doc.get(n, 0) + 1
        self._postings = {
            term: (np.fromiter(per_doc, np.int64, len(per_doc)), np.fromiter(per_doc.values(), np.float64))
            for term, per_doc in counts.items()
        }
        self.idf = {
            term: float(np.log(1 + (self.size - len(d) + 0.5) / (len(d) + 0.5))) for term, d in counts.items()
        }
        self._empty = average == 0

    def scores(self, query: Sequence[str]) -> np.ndarray:
        result = np.zeros(self.size)
        if self._empty:
            return result
        for term in set(query):
            posting = self._postings.get(term)
            if posting is None:
                continue
            docs, counts = posting
            result[docs] += self.idf[term] * counts * (self.k1 + 1) / (counts + self._norm[docs])
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
