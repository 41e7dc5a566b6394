"""The learned reader (``actors.language.reader``) behind the semantic reader's interface, for
``HERMES_READER=learned``: ``read(text, vector)`` gives the reading ``extraction.apply_reading`` applies,
or None.

Until the write path hands over the token states of the pass that embedded the candidate, this embeds the
clause again with its states (one more forward pass per slot-less candidate: ``tests/bench/
bench_learned_reader.py`` measures one). Only a slot read as the user's own lasting fact is applied (a
look-alike — someone else's fact, a hypothetical, a plan, a joke, a quote, a denial, a request — stays the
slot-less memory the rules made of it), with its value canonical as the rules' are.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from actors.language.lexicon import canonical_place, normalize_value
from actors.language.reader.reader import LearnedReader, StatesEmbedder
from actors.language.understanding.reader import Reading

_PLACES = frozenset({"basic.residence", "basic.hometown"})


class ClauseReader(Protocol):
    """What the write path asks of a reader: the slot and value of a clause no rule read, or None."""

    def read(self, text: str, vector: np.ndarray) -> Reading | None: ...


class LearnedClauseReader:
    def __init__(self, reader: LearnedReader, embedder: StatesEmbedder):
        self.reader = reader
        self.embedder = embedder

    def read(self, text: str, vector: np.ndarray) -> Reading | None:
        _, states, spans = self.embedder.embed_passages_with_states([text])
        reading = self.reader.read(text, states[0], spans[0])
        if not reading.own_slot or reading.slot is None or reading.value is None:
            return None
        value = (canonical_place if reading.slot in _PLACES else normalize_value)(reading.value)
        if not value:
            return None
        return Reading(reading.slot, reading.slot, value, reading.polarity == "-", reading.score)
