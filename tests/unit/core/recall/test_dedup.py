"""Recall's near-duplicate rule over generated rankings: the best k hits, none repeating a better one (the
same content hash, or embeddings at the near-duplicate similarity that also share most content words),
each item's vector read once however many hits it is compared with."""

from collections import Counter
from datetime import UTC, datetime

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from actors.core.memory import MemoryItem
from actors.core.recall.engine import Hit, RecallEngine
from actors.core.recall.view import ActiveView
from actors.language.tokens import same_words
from schemas.enums import Kind
from schemas.settings import GatePolicy

DIM = 8
PHRASES = (
    "I drink green tea every morning",
    "every morning I drink green tea",
    "I drink black coffee every morning",
    "my sister lives in Lisbon",
    "我每天早上喝绿茶",
    "早上我喝绿茶",
    "",
)


def direction(n: int, wobble: float) -> np.ndarray:
    """One of a few directions, nudged: nudged copies of one direction sit near the threshold."""
    rng = np.random.default_rng(n)
    vector = rng.standard_normal(DIM).astype(np.float32) + wobble * np.ones(DIM, np.float32)
    return vector / np.linalg.norm(vector)


@st.composite
def rankings(draw: st.DrawFn) -> tuple[list[Hit], dict[str, np.ndarray | None]]:
    count = draw(st.integers(0, 24))
    hits, vectors = [], {}
    for n in range(count):
        content = draw(st.sampled_from(PHRASES))
        item = MemoryItem(
            tenant_id="acme", user_id="alice", content=content, kind=Kind.EVENT, memory_id=f"m{n}"
        )
        has_vector = draw(st.booleans()) or draw(st.booleans())
        vectors[item.memory_id] = (
            direction(draw(st.integers(0, 2)), draw(st.sampled_from((0.0, 0.05, 0.3))))
            if has_vector
            else None
        )
        hits.append(
            Hit(item, total=1.0 - n / 100, relevance=1.0, time_decay=1.0, boosts={}, scores={}, routes=[])
        )
    return hits, vectors


def repeats(item: MemoryItem, better: MemoryItem, vectors: dict[str, np.ndarray | None], at: float) -> bool:
    """The rule, pair by pair, as docs/design.md states it."""
    if item.content_hash == better.content_hash:
        return True
    mine, theirs = vectors[item.memory_id], vectors[better.memory_id]
    if mine is None or theirs is None:
        return False
    return float(mine @ theirs) >= at and same_words(item.content, better.content)


@settings(max_examples=300, deadline=None)
@given(rankings(), st.integers(1, 10), st.sampled_from((0.92, 0.99, 0.5)))
def test_the_best_k_hits_none_repeating_a_better_one_each_vector_read_once(ranking, k, at):
    hits, vectors = ranking
    reads: Counter[str] = Counter()

    def vector_of(item: MemoryItem) -> np.ndarray | None:
        reads[item.memory_id] += 1
        return vectors[item.memory_id]

    engine = RecallEngine(
        ActiveView([], DIM),
        archive=lambda: None,  # type: ignore[arg-type, return-value]  # never asked: no recall runs
        policy=GatePolicy(near_duplicate_similarity=at),
        now=datetime(2025, 1, 1, tzinfo=UTC),
        vector_of=vector_of,
    )
    kept = engine._dedup(hits, k)

    expected: list[Hit] = []
    for hit in hits:
        if len(expected) < k and not any(repeats(hit.item, b.item, vectors, at) for b in expected):
            expected.append(hit)
    assert [h.item.memory_id for h in kept] == [h.item.memory_id for h in expected]
    assert all(count == 1 for count in reads.values()), reads
