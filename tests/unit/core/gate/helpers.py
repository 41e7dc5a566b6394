"""Builders shared by the gate-engine tests: candidates without the extractor, a controllable clock, ids
numbered in creation order."""

import itertools
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from unittest.mock import patch

import schemas.ids
from actors.core.gate.engine import GateEngine
from actors.core.memory import Candidate
from schemas.enums import Kind, Polarity, Source
from schemas.settings import Capacities, GatePolicy


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, days: float = 0, seconds: float = 0) -> None:
        self.now += timedelta(days=days, seconds=seconds)


@contextmanager
def numbered_ids() -> Iterator[None]:
    """Memory ids numbered in creation order instead of random ones, so a sequence of operations replays
    the same way: the gate breaks ties by id, and a test picks its targets among the sorted ids. Also a
    decorator (below ``@given``: a new count for every example)."""
    serial = itertools.count(1)
    with patch.object(schemas.ids, "uuid", SimpleNamespace(uuid4=lambda: uuid.UUID(int=next(serial)))):
        yield


def cand(
    content: str,
    session: str = "s1",
    dialog: str = "d1",
    *,
    slot: str | None = None,
    value: str | None = None,
    kind: Kind = Kind.FACT,
    polarity: Polarity = Polarity.POSITIVE,
    correction: bool = False,
    forced: bool = False,
    score: float = 0.8,
    source: Source = Source.USER_DECLARED,
    clock: Clock | None = None,
) -> Candidate:
    extra = {"observed_at": clock.now} if clock else {}
    return Candidate(
        content=content,
        kind=kind,
        session_id=session,
        dialog_ids=[dialog],
        polarity=polarity,
        slot=slot,
        value=value,
        importance=0.8 if slot and slot.startswith("basic.") else 0.5,
        confidence=0.8,
        source=source,
        is_correction=correction,
        forced=forced,
        write_score=score,
        **extra,
    )


def engine(
    working: int = 200, longterm: int = 1000, core: int = 50, clock: Clock | None = None
) -> GateEngine:
    policy = GatePolicy(capacities=Capacities(working=working, longterm=longterm, core=core))
    return GateEngine("t1", "u1", policy, clock=clock or Clock())
