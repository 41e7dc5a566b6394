"""What a resident user holds: each vector once (in recall's rows, not in the items as well), SQL keeping
every item's vector through whatever the user says, and the host's estimate of the bytes held near what
tracemalloc counts."""

import random
import tracemalloc
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.memory import GateChanges
from actors.store.sql.store import MemoryStore
from schemas import api
from schemas.enums import State
from schemas.settings import Capacities, GatePolicy
from tests.bench import seed

DIM = 64
SAYINGS = [
    "I live in Hangzhou",
    "actually I moved to Suzhou",
    "I'm allergic to peanuts",
    "I really like hot pot",
    "我最近迷上了爬山",
    "My sister Ana plays the violin",
    "I went hiking in Kyoto last weekend",
    "remember that my passport expires in May",
    "I don't enjoy ramen anymore",
]


def service(store, **policy) -> UserMemoryService:
    return UserMemoryService(
        "acme", "alice", store=store, embedder=HashEmbedder(DIM), policy=GatePolicy(**policy)
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["say", "recall", "reload"]), st.integers(0, len(SAYINGS) - 1)),
        min_size=1,
        max_size=14,
    )
)
def test_sql_keeps_every_items_vector_while_memory_holds_each_once(tmp_path_factory, steps):
    store = MemoryStore(f"sqlite:///{tmp_path_factory.mktemp('db') / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    svc = service(store)
    embedder = HashEmbedder(DIM)
    for n, (action, index) in enumerate(steps):
        if action == "say":
            turn = api.TurnIn(text=SAYINGS[index], dialog_id=f"d{n}")
            svc.writes.write_turns(api.WriteTurnsRequest(session_id=f"s{n % 3}", turns=[turn]))
        elif action == "recall":
            svc.recalls.recall(api.RecallRequest(query=SAYINGS[index]))
            svc.flush_access()  # the heat's commit updates the items recall found
        else:
            svc = service(store)
    svc.recalls.recall(api.RecallRequest(query="anything"))
    for item in svc.work.engine.active():
        assert item.embedding is None  # the one copy is in the rows
        held = svc.recall_state.vector_of(item)
        expected = embedder.embed_passages([item.content])[0]
        assert held is not None and np.allclose(held, expected, atol=1e-4)  # int16 rows
    for item in store.memories.page("acme", "alice", limit=1000):
        if item.state is not State.DELETED and not item.merged_from:
            assert item.embedding is not None
            stored = np.frombuffer(item.embedding, np.float32)
            assert np.allclose(stored, embedder.embed_passages([item.content])[0], atol=1e-6)
    store.dispose()


@pytest.mark.parametrize("items", [300, 1600])
def test_the_hosts_estimate_of_a_resident_user_is_near_what_tracemalloc_counts(store, items):
    """Seed-shaped users (the bench's layout: working, long-term, core, then archive), one with its archive
    whole in memory and one beyond the in-memory budget."""
    pool = seed.sentence_pool(1500)
    vectors = np.random.default_rng(1).standard_normal((len(pool), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    capacities = Capacities(working=40, longterm=200, core=10)
    layout = seed.layout_for(items, capacities)
    rows = []
    for item, index in seed._user_items("acme", "alice", layout, pool, random.Random(3), datetime.now(UTC)):
        item.embedding = vectors[index].tobytes()
        rows.append(item)
    store.memories.commit(GateChanges(upserted={i.memory_id: i for i in rows}))
    policy = {"capacities": capacities, "archive_memory_items": 1000}
    service(store, **policy).recalls.recall(api.RecallRequest(query="warm up the tokenizers", k=8))
    tracemalloc.start()
    svc = service(store, **policy)
    svc.recalls.recall(api.RecallRequest(query="Do you remember when I said I like sushi", k=8))
    svc.recall_state._queries.clear()  # the query cache is not what grows with the user's memory
    traced, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert 0.7 * traced <= svc.resident_bytes <= 1.4 * traced


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.integers(0, len(SAYINGS) - 1), st.integers(0, 3)), max_size=30))
def test_between_writes_memory_holds_what_a_fresh_load_holds(tmp_path_factory, steps):
    """What writes archived or superseded goes from memory (it is in SQL): a long residency holds the
    items a reload would, not every item it ever saw."""
    store = MemoryStore(f"sqlite:///{tmp_path_factory.mktemp('db') / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    svc = service(store, capacities=Capacities(working=3, longterm=3, core=2))
    for n, (index, session) in enumerate(steps):
        turn = api.TurnIn(text=SAYINGS[index], dialog_id=f"d{n}")
        svc.writes.write_turns(api.WriteTurnsRequest(session_id=f"s{session}", turns=[turn]))
        svc.work.engine.forget_inactive()  # as the next write starts
        loaded = {
            i.memory_id: (i.state, i.layer, i.version) for i in store.memories.load_active("acme", "alice")
        }
        held = {i.memory_id: (i.state, i.layer, i.version) for i in svc.work.engine.items.values()}
        assert held == loaded
    store.dispose()
