"""The service's recall over an archive larger than its in-memory budget (real SQLite, the in-memory index fed
by the outbox, the hashing embedder): what memory no longer holds is found through the index, as SQL holds
it now; an index that lags SQL or does not answer changes nothing that memory already answers."""

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.memory import GateChanges, MemoryItem
from actors.core.recall.view import ArchiveView
from actors.runtime.outbox import drain
from actors.store.sql.store import MemoryStore
from actors.store.vectors.memory_index import InMemoryIndex
from schemas import api
from schemas.enums import Kind, Layer, State
from schemas.errors import StoreUnavailable
from schemas.settings import GatePolicy, HermesSettings

DIM = 128
NOW = datetime(2025, 6, 1, tzinfo=UTC)
PLACES = "harbor village station market campus stadium library orchard vineyard quarry".split()
THINGS = "fence bicycle canoe bookshelf greenhouse piano telescope kite lantern hammock".split()
#: the thirty archived memories, newest first: the newest few fit in memory, the rest do not
TEXTS = [f"I repaired the {THINGS[n % 10]} near the {PLACES[n // 10 * 3 % 10]} {n}" for n in range(30)]


def archived(content: str, at: datetime | None, **fields) -> MemoryItem:
    """One of alice's archived memories, archived ``at``."""
    return MemoryItem(
        tenant_id="acme",
        user_id="alice",
        content=content,
        kind=Kind.EVENT,
        layer=Layer.ARCHIVE,
        state=State.ARCHIVED,
        archived_at=at,
        **fields,
    )


def seed_archive(store, index) -> list[MemoryItem]:
    embedder = HashEmbedder(DIM)
    items = []
    for n, (text, vector) in enumerate(zip(TEXTS, embedder.embed_passages(TEXTS), strict=True)):
        at = NOW - timedelta(days=10 + n)
        items.append(
            archived(
                text,
                at,
                embedding=vector.tobytes(),
                created_at=at - timedelta(days=30),
                updated_at=at,
                last_accessed_at=at,
            )
        )
    store.memories.commit(
        GateChanges(upserted={i.memory_id: i for i in items}), tenant_id="acme", user_id="alice"
    )
    drain(store, index, DIM)
    return items


def service(store, index=None, budget=5) -> UserMemoryService:
    return UserMemoryService(
        "acme",
        "alice",
        store=store,
        embedder=HashEmbedder(DIM),
        policy=GatePolicy(archive_memory_items=budget),
        clock=lambda: NOW,
        vector_index=index,
    )


def top_ids(svc: UserMemoryService, query: str, k: int = 3) -> list[str]:
    return [hit.memory.memory_id for hit in svc.recalls.recall(api.RecallRequest(query=query, k=k)).hits]


@pytest.mark.parametrize("n", [12, 20, 29])
def test_an_item_beyond_the_budget_is_recalled_through_the_index_as_if_memory_held_it(store, n):
    items = seed_archive(store, index := InMemoryIndex(DIM))
    query = TEXTS[n]
    everything = service(store, budget=1000)  # the whole archive in memory: today's path
    assert top_ids(everything, query)[0] == items[n].memory_id
    assert items[n].memory_id not in top_ids(service(store), query)  # newest five only, no index
    beyond = service(store, lambda: index)
    assert top_ids(beyond, query)[0] == items[n].memory_id
    archive = beyond.recall_state.archive_view()
    assert len(archive.items) == 5 and not archive.complete


def test_hits_are_read_back_from_sql_so_a_lagging_index_brings_back_no_stale_state(store):
    items = seed_archive(store, index := InMemoryIndex(DIM))
    svc = service(store, lambda: index)
    # back in long-term; the index row still says archived (not drained)
    svc.memories.restore(items[20].memory_id)
    hits = svc.recalls.recall(api.RecallRequest(query=TEXTS[20], k=3)).hits
    found = [(h.memory.layer, h.memory.state) for h in hits if h.memory.memory_id == items[20].memory_id]
    assert found == [(Layer.LONGTERM, State.PENDING)]


def test_an_index_that_does_not_answer_leaves_recall_to_memory(store):
    items = seed_archive(store, InMemoryIndex(DIM))

    def down():
        raise StoreUnavailable("Milvus at test is unavailable")

    svc = service(store, down)
    assert top_ids(svc, TEXTS[2])[0] == items[2].memory_id  # held in memory
    assert items[20].memory_id not in top_ids(svc, TEXTS[20])


def test_the_restore_job_finds_its_candidates_over_the_whole_archive(tmp_path, monkeypatch):
    from jobs import restore

    settings = HermesSettings(home=tmp_path, embedder="hash", milvus_uri="http://127.0.0.1:1")
    store = MemoryStore.from_settings(settings)
    store.create_schema()
    store.tenants.create("acme")
    index = InMemoryIndex(HashEmbedder().dim)
    embedder = HashEmbedder()
    texts = [f"I repaired the {THINGS[n % 10]} near the {PLACES[n % 7]} in {1990 + n}" for n in range(30)]
    items = []
    for n, (text, vector) in enumerate(zip(texts, embedder.embed_passages(texts), strict=True)):
        at = datetime.now(UTC) - timedelta(days=1 + n)  # the last one archived longest ago
        item = archived(
            text, at, embedding=vector.tobytes(), created_at=at, updated_at=at, last_accessed_at=at
        )
        items.append(item)
    store.memories.commit(
        GateChanges(upserted={i.memory_id: i for i in items}), tenant_id="acme", user_id="alice"
    )
    drain(store, index, embedder.dim)
    monkeypatch.setattr(restore, "MAX_ARCHIVED_PER_USER", 5)  # SQL's newest rows hold only the first five
    plan = restore.RestorePlan(
        query_vector=embedder.embed_queries([texts[27]])[0].tolist(), min_query_similarity=0.9, limit=3
    )
    worker = restore.RestoreUsers(settings.model_dump_json(), "run-1", {}, dataclasses.asdict(plan))
    monkeypatch.setattr(worker, "_vector_index", lambda dim: index)
    assert worker._one("acme", "alice")["restored"] == 1
    assert store.memories.get("acme", "alice", items[27].memory_id).layer is Layer.LONGTERM
    store.dispose()


@pytest.mark.parametrize("budget", [1000, 5], ids=["memory holds the archive", "memory holds part of it"])
@pytest.mark.parametrize("n", [2, 20])
def test_restating_an_archived_memory_restores_it_with_its_stored_vector(store, budget, n):
    items = seed_archive(store, InMemoryIndex(DIM))
    svc = service(store, budget=budget)
    svc.recall_state.archive_view()  # loaded, as after a first recall
    turns = [api.TurnIn(text=TEXTS[n], dialog_id="d-again")]
    result = svc.writes.write_turns(api.WriteTurnsRequest(session_id="s-again", turns=turns))
    assert [o.memory_id for o in result.outcomes] == [items[n].memory_id]
    restored = store.memories.get("acme", "alice", items[n].memory_id)
    assert restored.layer is Layer.LONGTERM and store.memories.count("acme", "alice") == len(items)
    assert np.allclose(
        svc.recall_state.vector_of(svc.work.engine.items[restored.memory_id]),
        HashEmbedder(DIM).embed_passages([TEXTS[n]])[0],
        atol=1e-3,
    )
    assert top_ids(svc, TEXTS[n])[0] == items[n].memory_id


WORDS = st.sampled_from(["tea", "coffee", "the harbor", "a kite"])
SLOTS = st.none() | st.sampled_from(["basic.residence", "preference.diet"])
WHEN = st.none() | st.integers(0, 3).map(lambda days: NOW - timedelta(days=days))  # ties, and never


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(archive=st.lists(st.tuples(WORDS, SLOTS, WHEN), min_size=1, max_size=12))
def test_memory_names_the_archived_items_sql_finds_in_the_same_order(tmp_path_factory, archive):
    store = MemoryStore(f"sqlite:///{tmp_path_factory.mktemp('db') / 'h.db'}")
    store.create_schema()
    store.tenants.create("acme")
    items = [archived(words, when, slot=slot) for words, slot, when in archive]
    store.memories.commit(
        GateChanges(upserted={i.memory_id: i for i in items}), tenant_id="acme", user_id="alice"
    )
    # the items enter memory as writes archive them, in no particular order (loaded, they come in SQL's)
    view = ArchiveView(lambda limit: [], DIM, budget=1000)
    view.apply(items)
    assert view.complete
    for digest in {i.content_hash for i in items}:
        found = store.memories.archived("acme", "alice", content_hash=digest, limit=1)
        assert view.newest_ids(content_hash=digest, limit=1) == [i.memory_id for i in found]
    for slot in {i.slot for i in items if i.slot}:
        found = store.memories.archived("acme", "alice", slot=slot, limit=3)
        assert view.newest_ids(slot=slot, limit=3) == [i.memory_id for i in found]
    store.dispose()
