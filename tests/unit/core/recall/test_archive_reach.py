"""When recall reads the archive beyond memory, and what it brings back: an archive that fits the budget is
never searched elsewhere, whatever the query; one that does not is searched when the in-memory recall is
weak or the question names a period older than memory's archive; the newest items stay in memory as items
enter, and what the deep archive finds that memory already holds is not counted twice."""

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.memory import MemoryItem
from actors.core.recall.engine import RecallEngine
from actors.core.recall.view import ActiveView, ArchiveView, Reach
from actors.language.periods import Period
from schemas.enums import Kind, Layer, State
from schemas.settings import GatePolicy

DIM = 16
NOW = datetime(2025, 6, 1, tzinfo=UTC)


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def archived(n: int, words: str = "an old note", days_ago: float | None = None) -> MemoryItem:
    """Item ``n``: archived ``n`` hours before the newest (higher ``n`` is older), said a day before that."""
    archived_at = NOW - timedelta(hours=n)
    created = NOW - timedelta(days=days_ago) if days_ago is not None else archived_at - timedelta(days=1)
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=f"{words} {n}",
        kind=Kind.EVENT,
        memory_id=f"m{n:05d}",
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        embedding=unit(n).tobytes(),
        created_at=created,
        archived_at=archived_at,
    )


class FakeDeep:
    """The whole archive as the vector index and SQL would serve it, counting the calls."""

    def __init__(self, items: list[MemoryItem]):
        self.items = items
        self.nearest_calls = 0
        self.period_calls = 0

    def nearest(self, vector: np.ndarray, depth: int, held: Collection[str] = ()) -> list[MemoryItem]:
        self.nearest_calls += 1
        scores = [float(np.frombuffer(i.embedding or b"", np.float32) @ vector) for i in self.items]
        order = sorted(range(len(self.items)), key=lambda n: -scores[n])
        return [self.items[n] for n in order[:depth] if self.items[n].memory_id not in held]

    def told_within(self, period: Period, depth: int) -> list[MemoryItem]:
        self.period_calls += 1
        return [i for i in self.items if period.contains(i.created_at)][:depth]


def view_of(items: list[MemoryItem], budget: int) -> tuple[ArchiveView, FakeDeep]:
    newest_first = sorted(items, key=lambda i: i.archived_at or NOW, reverse=True)
    deep = FakeDeep([item.copy() for item in items])  # SQL's rows: not the objects the view holds
    return ArchiveView(lambda limit: newest_first[:limit], DIM, budget, deep=deep), deep


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(0, 60),
    budget=st.integers(0, 80),
    best=st.floats(-1, 1),
    period_days_ago=st.none() | st.integers(0, 400),
)
def test_an_archive_within_the_budget_is_never_searched_beyond_memory(size, budget, best, period_days_ago):
    view, deep = view_of([archived(n) for n in range(size)], budget)
    told = None
    if period_days_ago is not None:
        start = NOW - timedelta(days=period_days_ago)
        told = Period(start, start + timedelta(days=30))
    reach = view.reach(best, told, weak_below=0.85)
    assert bool(reach) == (size > budget and (best < 0.85 or reach.old_period))
    if size <= budget:
        assert not reach and view.beyond(reach, unit(0), told, 40) is None
        assert deep.nearest_calls == deep.period_calls == 0
        assert len(view.items) == size


def test_a_weak_recall_searches_the_whole_archive_and_keeps_only_what_memory_lacks():
    items = [archived(n) for n in range(50)]
    view, deep = view_of(items, budget=10)
    assert not view.complete and len(view.items) == 10
    assert not view.reach(0.9, None, weak_below=0.85)  # a strong match in memory: memory answers
    reach = view.reach(0.5, None, weak_below=0.85)
    assert reach == Reach(weak=True, old_period=False)
    beyond = view.beyond(reach, unit(30), None, depth=5)
    assert beyond is not None and deep.nearest_calls == 1 and deep.period_calls == 0
    ids = [i.memory_id for i in beyond.items]
    assert ids[0] == "m00030"  # the old item the query is about, found beyond memory
    assert not set(ids) & set(view.items)  # memory's own items are scored from memory, once


def test_an_old_period_reads_what_was_said_then_and_a_recent_one_does_not():
    items = [archived(n, days_ago=n * 5) for n in range(40)]  # one item every five days, newest first
    view, deep = view_of(items, budget=8)  # memory reaches back 35 days
    recent = Period(NOW - timedelta(days=20), NOW)
    assert not view.reach(0.95, recent, weak_below=0.85)
    old = Period(NOW - timedelta(days=101), NOW - timedelta(days=89))
    reach = view.reach(0.95, old, weak_below=0.85)
    assert reach == Reach(weak=False, old_period=True)
    beyond = view.beyond(reach, unit(0), old, depth=40)
    assert beyond is not None and deep.period_calls == 1 and deep.nearest_calls == 0
    assert sorted(i.memory_id for i in beyond.items) == ["m00018", "m00019", "m00020"]


def test_memory_keeps_the_newest_items_within_the_budget_plus_the_recent_part():
    view, _ = view_of([archived(n) for n in range(1000, 1010)], budget=10)
    assert view.complete
    newcomers = [archived(n) for n in range(ArchiveView.MERGE_AT - 1, -1, -1)]  # newer and newer
    view.apply(newcomers[:-1])
    assert view.complete and len(view.items) == 10 + ArchiveView.MERGE_AT - 1  # not merged yet
    view.apply(newcomers[-1:])
    assert not view.complete and sorted(view.items) == [f"m{n:05d}" for n in range(10)]
    assert sorted(i.memory_id for part in view.parts() for i in part.items) == sorted(view.items)


def test_recall_finds_an_item_only_the_deep_archive_holds_and_marks_it_archived():
    items = [archived(n, words="a trip to the lake" if n == 42 else "a note about chores") for n in range(60)]
    view, deep = view_of(items, budget=5)
    engine = RecallEngine(ActiveView([], DIM), lambda: view, GatePolicy(), NOW)
    hits = engine.recall("the lake trip", unit(42), k=3)
    assert deep.nearest_calls == 1
    assert hits[0].item.memory_id == "m00042" and "archive" in hits[0].routes
    strong = RecallEngine(ActiveView([], DIM), lambda: view, GatePolicy(archive_search_below=0.0), NOW)
    assert "m00042" not in {h.item.memory_id for h in strong.recall("the lake trip", unit(42), k=3)}
    assert deep.nearest_calls == 1  # nothing in memory is weak under a zero threshold: not searched
