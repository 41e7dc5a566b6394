"""The learned reader (``actors.language.reader``) at the write chain's read step (``actors.app.write``): it
reads the candidates no rule gave a slot from the token states of the forward pass that embedded them
(``PreparedWrite.states``), clause by clause, and gives each the reading of its most confident clause.

How the reader and the rules combine: the rules stay where they read a slot (their vocabulary, numbers and
dates are exact); the reader decides the slot, the value and the flags of every other clause. A reading is
kept when the clause is a fact with a slot and a value, no flag makes it someone else's or not real (about
someone else — but for a relation slot, which says who they are to the user —, hypothetical, a plan, a joke,
a quote), and the reader's doubt that it is the user's own fact stays under ``DOUBT_CUT`` — or the clause
is flagged a denial, a change or a retraction, which the doubt counts against (``corpus.not_own``) but
which are the user's own statements about a fact. Its flags then say how the gate takes it: a denial or a
retraction is a negative reading (a withdrawal; against a vital fact it waits with its alert), a change is
a correction (it supersedes, or waits with its alert where the old value is frozen or vital), a time-bound
clause a state (never frozen). A correction the rules' sentence markers read ("打错了", "actually") counts
as a change too. Figures: docs/quality.md#13-the-learned-reader-in-the-write-path.
"""

from __future__ import annotations

import numpy as np

from actors.adapters.embedding import Embedder
from actors.app.write import ClauseReader, PreparedWrite, Readings, UnruledReader
from actors.core.extraction import ClauseReading
from actors.language.lexicon import canonical_place, normalize_value
from actors.language.packs import packs
from actors.language.reader.reader import LearnedReader, StatesEmbedder
from actors.language.reader.reader import Reading as LearnedReading
from actors.language.segments import Sentence, segment
from actors.language.understanding.reader import SemanticReader

#: flags that make a clause not the user's own fact
NOT_THE_USERS = frozenset({"other", "hypothetical", "plan", "sarcasm", "quoted"})
#: flags of the user's own statement about a fact that the reader's doubt counts against
STATEMENTS_ABOUT_A_FACT = frozenset({"negated", "change", "retraction"})
#: the slots the reader gives: lasting facts (a plan or a state is read by its flags, ``plan`` and
#: ``time_bound``, on these)
LASTING = ("basic.", "preference.", "relation.")
PLACES = frozenset({"basic.residence", "basic.hometown"})
#: the doubt (a logit) under which a reading is the user's own: chosen on the corpus's training part
#: (``tests/bench/choose_reading_cut.py``: the most right readings with look-alikes kept within 2 %)
DOUBT_CUT = -1.5
#: the likeliest slot's probability a reading needs (the reader reads a value from 0.50): chosen with the cut
MIN_SCORE = 0.65
#: where a clause's parts are cut for the reader, beside the rules' clauses
_CUTS = frozenset(",，;；、")


def make_reader(kind: str, embedder: Embedder, model: Embedder | None = None) -> ClauseReader:
    """The clause reader the settings name (``HermesSettings.reader``), its shipped model checked against
    ``embedder``: the learned reader where asked for and the model gives token states (``model``: the
    model a batching ``embedder`` shares, whose kind decides), else the semantic reader."""
    states = model if model is not None else embedder
    if kind == "learned" and isinstance(states, StatesEmbedder):
        return LearnedClauseReader(LearnedReader.load(states))
    return UnruledReader(SemanticReader.load(embedder))


class LearnedClauseReader:
    reads_states = True

    def __init__(self, reader: LearnedReader, doubt_cut: float = DOUBT_CUT, min_score: float = MIN_SCORE):
        self.reader = reader
        self.doubt_cut = doubt_cut
        self.min_score = min_score
        self._packs = packs()

    def read(self, prepared: PreparedWrite) -> Readings:
        candidates = prepared.extraction.candidates
        if prepared.states is None:
            return (None,) * len(candidates)
        return tuple(
            None if cand.slot is not None else self.read_clause(cand.content, states, spans)
            for cand, (states, spans) in zip(candidates, prepared.states, strict=True)
        )

    def read_clause(self, text: str, states: np.ndarray, spans: np.ndarray) -> ClauseReading | None:
        """The reading of the part of ``text`` the reader is surest of, among those it keeps."""
        sentences = segment(text, self._packs)
        corrected = any(sentence.correction for sentence in sentences)
        best: tuple[float, ClauseReading] | None = None
        for window in windows(text, sentences):
            learned = self.reader.read(text, states, spans, window)
            reading = self.kept(learned, corrected)
            if reading is not None and (best is None or learned.score > best[0]):
                best = (learned.score, reading)
        return None if best is None else best[1]

    def kept(self, learned: LearnedReading, corrected: bool = False) -> ClauseReading | None:
        """``learned`` as the gate takes it, or None when it is not a fact of the user's own."""
        if learned.act != "fact" or learned.slot is None or learned.value is None:
            return None
        if not learned.slot.startswith(LASTING) or learned.score < self.min_score:
            return None
        flags = learned.flags
        if flags & NOT_THE_USERS:
            return None
        if learned.doubt >= self.doubt_cut and not flags & STATEMENTS_ABOUT_A_FACT:
            return None
        value = (canonical_place if learned.slot in PLACES else normalize_value)(learned.value)
        if not value:
            return None
        return ClauseReading(
            learned.slot,
            value,
            negative=learned.polarity == "-" or bool(flags & {"negated", "retraction"}),
            correction="change" in flags or corrected,
            temporary="time_bound" in flags,
        )


def windows(text: str, sentences: list[Sentence]) -> list[tuple[int, int]]:
    """The parts of ``text`` the reader reads: the whole, the rules' clauses (of ``sentences``, the text
    segmented), and each clause's parts between commas, as ``[start, end)`` character windows."""
    found = [(0, len(text))]
    at = 0
    for sentence in sentences:
        for clause in sentence.clauses:
            start = text.find(clause.text, at)
            if start < 0:
                continue
            end = start + len(clause.text)
            found.append((start, end))
            found += _parts(text, start, end)
            at = end
    return list(dict.fromkeys(found))


def _parts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    cuts = [n for n in range(start, end) if text[n] in _CUTS]
    if not cuts:
        return []
    bounds = [start, *cuts, end]
    parts = []
    for left, right in zip(bounds, bounds[1:], strict=False):
        left += left != start  # past the comma
        while left < right and text[left].isspace():
            left += 1
        if left < right:
            parts.append((left, right))
    return parts
