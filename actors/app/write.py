"""A write of turns as a chain of values, each computed once (docs/design.md#one-write-layer-by-layer).

1. ``extract``: the request's turns, each with its time decided (a turn without one is said at the moment
   the write was received), read by the extractor into an ``Extraction``: the candidates, how many turns
   gave none, and what was not kept and why. It reads the request alone, so the host may run it while the
   call waits for the user's mailbox.
2. the candidates' passage vectors, one row each (embedded ahead by the host, or by the service), and
   when the reader reads them their tokens' last-layer states from the same forward pass, with the
   extraction: a ``PreparedWrite``.
3. ``read``: the clause reader's readings of the candidates no rule gave a slot (``ClauseReader``: the
   learned reader of ``actors.language.reader`` over the token states of the pass that gave the vectors,
   ``actors.app.learned_reading``, or the semantic reader of ``actors.language.understanding`` over the
   vectors alone), and ``read_into``: the candidates with their readings, a new tuple.
4. ``with_context``: each candidate with the turns said just before its own in its session (its context,
   ``actors.core.said_before``), in the user's order of calls, since the turns before may have come in an
   earlier call;
5. the gates decide them (``actors.app.pipeline.decide``) and the user's unit of work commits them
   (``Writes.write`` of ``actors.app.resources``), or they are decided on a forked engine and nothing is
   committed (``Writes.preview``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

import numpy as np

from actors.core.extraction import (
    ClauseReading,
    Extractor,
    Turn,
    context_words,
    read_as,
    read_turn,
    split_speaker,
)
from actors.core.memory import Candidate
from actors.core.said_before import SessionTurns, context_of
from actors.language.understanding.reader import SemanticReader
from schemas import api

#: what a clause reader found in each candidate, in the candidates' order (None: nothing read)
Readings = tuple[ClauseReading | None, ...]
#: per candidate, its tokens' last-layer states ((tokens, hidden) float32) and their ``[start, end)``
#: character spans in its content ((tokens, 2) int32): ``StatesEmbedder.embed_passages_with_states``
TokenStates = tuple[tuple[np.ndarray, np.ndarray], ...]


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a write's turns say, read once."""

    #: the turns as read, each with its time: the words around a memory (what came before it) are here
    turns: tuple[Turn, ...] = ()
    #: each turn's words as a later memory's context keeps them (``context_words``), in the turns' order
    said: tuple[str, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    #: how many turns proposed no candidate
    ignored: int = 0
    #: the parts of the turns not kept, and why, each with its turn's dialog id
    not_kept: tuple[api.NotKept, ...] = ()

    @property
    def passages(self) -> list[str]:
        """The texts whose vectors the write needs: its candidates' contents, in order."""
        return [c.content for c in self.candidates]


def extract(extractor: Extractor, request: api.WriteTurnsRequest, received: datetime) -> Extraction:
    """The request's turns read by ``extractor``; a turn without a time is said at ``received``."""
    turns = tuple(
        Turn(
            text=turn.text,
            session_id=request.session_id,
            dialog_id=turn.dialog_id,
            role=turn.role,
            at=turn.at or received,
        )
        for turn in request.turns
    )
    candidates: list[Candidate] = []
    not_kept: list[api.NotKept] = []
    said: list[str] = []
    ignored = 0
    for turn in turns:
        reading = read_turn(extractor, turn)
        # the rules clean a user's turn as they read it; an assistant's turn, or a plug-in's, is cleaned here
        said.append(context_words(turn.text) if reading.said is None else reading.said)
        ignored += not reading.candidates
        candidates += reading.candidates
        not_kept += [
            api.NotKept(dialog_id=turn.dialog_id, detail=not_kept_detail(d.value)) for d in reading.dropped
        ]
    return Extraction(tuple(turns), tuple(said), tuple(candidates), ignored, tuple(not_kept))


def not_kept_detail(reason: str) -> str:
    return f"not kept: {reason}"


@dataclass(frozen=True, slots=True, eq=False)  # vectors: compared by identity
class PreparedWrite:
    """An extraction with its candidates' passage vectors: row ``n`` (float32) is candidate ``n``'s; and,
    when the clause reader reads them, their token states from the same forward pass."""

    extraction: Extraction
    vectors: np.ndarray
    states: TokenStates | None = None

    def __post_init__(self) -> None:
        wanted = len(self.extraction.candidates)
        if len(self.vectors) != wanted:
            raise ValueError(f"{len(self.vectors)} vectors for {wanted} candidates")
        if self.states is not None and len(self.states) != wanted:
            raise ValueError(f"{len(self.states)} token states for {wanted} candidates")


class ClauseReader(Protocol):
    """Reads a write's candidates: what each is about, where no rule said it."""

    #: whether it reads the candidates' token states (``PreparedWrite.states``), not only their vectors
    @property
    def reads_states(self) -> bool: ...

    def read(self, prepared: PreparedWrite) -> Readings: ...


class UnruledReader:
    """The semantic reader (``actors.language.understanding``) as a clause reader: it reads the candidates no
    rule gave a slot, each with one small matrix product on its vector."""

    reads_states = False

    def __init__(self, reader: SemanticReader):
        self.reader = reader

    def read(self, prepared: PreparedWrite) -> Readings:
        return tuple(
            None if cand.slot is not None else self._read(cand.content, vector)
            for cand, vector in zip(prepared.extraction.candidates, prepared.vectors, strict=True)
        )

    def _read(self, content: str, vector: np.ndarray) -> ClauseReading | None:
        reading = self.reader.read(split_speaker(content)[1], vector)
        return None if reading is None else ClauseReading.of(reading)


def read(prepared: PreparedWrite, reader: ClauseReader | None) -> Readings:
    """The reader's readings of the prepared write's candidates (none without a reader)."""
    if reader is None:
        return (None,) * len(prepared.extraction.candidates)
    return reader.read(prepared)


def read_into(candidates: tuple[Candidate, ...], readings: Readings) -> tuple[Candidate, ...]:
    """The candidates with their readings folded in (``core.extraction.read_as``); the others as they are."""
    return tuple(
        cand if reading is None else read_as(cand, reading)
        for cand, reading in zip(candidates, readings, strict=True)
    )


def with_context(
    candidates: tuple[Candidate, ...], extraction: Extraction, said_before: SessionTurns
) -> tuple[Candidate, ...]:
    """The candidates, each with its context: the session's turns said before its own turn, from this write
    (``extraction``'s turns, cleaned as a memory is: ``Extraction.said``) and, kept in ``said_before``, the
    writes before it. ``said_before`` takes in this write's turns, so it must be the user's own, in the
    order their calls run."""
    context_of_turn: dict[str, str | None] = {}
    for turn, said in zip(extraction.turns, extraction.said, strict=True):
        context_of_turn[turn.dialog_id] = context_of(said_before.before(turn.session_id))
        said_before.add(turn.session_id, said)
    return tuple(
        replace(cand, context=context_of_turn.get(cand.dialog_ids[0])) if cand.dialog_ids else cand
        for cand in candidates
    )
