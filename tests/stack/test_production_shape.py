"""The production shape on one machine: PostgreSQL as the source of truth and a real Milvus (the 2.3
standalone server) as the vector index, under the memory service itself (rule extraction, both gates, the
E5 embedder), the index brought up to date from the outbox as a host does it. milvus-lite forgives what a
real Milvus does not (a loaded partition cannot be dropped, a write becomes visible at the next time tick,
a hit names its key ``id``), so differences show here.
"""

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from actors.adapters.embedding import E5Embedder
from actors.app.service import UserMemoryService
from actors.core.memory import GateChanges, MemoryItem
from actors.runtime.outbox import drain
from actors.store.sql.store import MemoryStore
from actors.store.vectors.filters import partition_name
from actors.store.vectors.milvus import MilvusIndex
from schemas import api
from schemas.enums import Kind, Layer, State
from schemas.settings import GatePolicy
from tests.stack.test_sql_postgres import _drop_postgres_schema, _fresh_postgres_schema

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def store(postgres_url: str) -> Iterator[MemoryStore]:
    schema, url = _fresh_postgres_schema(postgres_url)
    sql = MemoryStore(url)
    sql.create_schema()
    try:
        yield sql
    finally:
        sql.dispose()
        _drop_postgres_schema(postgres_url, schema)


@pytest.fixture
def index(milvus_standalone) -> Iterator[MilvusIndex]:
    vectors = MilvusIndex(milvus_standalone.uri, f"prod_{uuid.uuid4().hex[:12]}", E5Embedder.dim)
    try:
        yield vectors
    finally:
        vectors._client.drop_collection(vectors.collection)
        vectors.close()


@pytest.fixture(scope="module")
def embedder() -> E5Embedder:
    return E5Embedder()


def user(store: MemoryStore, embedder: E5Embedder, tenant: str, name: str) -> UserMemoryService:
    policy = store.tenants.policy(tenant)
    return UserMemoryService(tenant, name, store=store, embedder=embedder, policy=policy)


def synced(store: MemoryStore, index: MilvusIndex) -> None:
    """What a host's outbox thread does after each commit."""
    while drain(store, index, E5Embedder.dim):
        pass


def say(service: UserMemoryService, *texts: str) -> None:
    turns = [api.TurnIn(text=text, dialog_id=f"d{n}") for n, text in enumerate(texts)]
    service.writes.write_turns(api.WriteTurnsRequest(session_id="s1", turns=turns))


def sql_ids(store: MemoryStore, tenant: str, name: str) -> set[str]:
    return {item.memory_id for item in store.memories.load_active(tenant, name)}


def test_postgres_and_milvus_server_hold_one_memory(store, index, embedder) -> None:
    acme, globex = (f"t_{uuid.uuid4().hex[:10]}" for _ in range(2))
    store.tenants.create(acme, "Acme")
    store.tenants.create(globex, "Globex")
    alice, bob = user(store, embedder, acme, "alice"), user(store, embedder, acme, "bob")
    other_alice = user(store, embedder, globex, "alice")
    say(alice, "I'm allergic to peanuts", "I live in Lisbon", "My sister is called Marta")
    say(bob, "I'm allergic to shellfish", "I work as a nurse")
    say(other_alice, "I'm allergic to peanuts", "I live in Oslo")
    synced(store, index)

    # every committed item is indexed, under its own tenant and user, and visible at once to this process
    for tenant, name in [(acme, "alice"), (acme, "bob"), (globex, "alice")]:
        assert sql_ids(store, tenant, name) and index.ids(tenant, name) == sql_ids(store, tenant, name)
    hits = alice.recalls.recall(api.RecallRequest(query="what should I avoid cooking?")).hits
    assert {hit.memory.memory_id for hit in hits} <= sql_ids(store, acme, "alice")
    assert any("peanut" in hit.memory.content and "semantic" in hit.routes for hit in hits)

    peanuts = next(item for item in store.memories.load_active(acme, "alice") if "peanut" in item.content)
    alice.memories.forget(peanuts.memory_id, api.ForgetRequest())
    synced(store, index)
    assert peanuts.memory_id not in index.ids(acme, "alice")
    assert index.ids(globex, "alice") == sql_ids(store, globex, "alice")  # the same words elsewhere stay

    bob.memories.erase(api.EraseRequest())
    synced(store, index)
    assert index.ids(acme, "bob") == set() and index.ids(acme, "alice") == sql_ids(store, acme, "alice")

    # a loaded partition cannot be dropped on a real Milvus: the tenant's partition must really go
    index.drop_tenant(acme)
    assert not index._client.has_partition(index.collection, partition_name(acme))
    assert index.count(acme) == 0 and index.ids(globex, "alice") == sql_ids(store, globex, "alice")

    # and the tenant's next write brings its partition back, searchable at once
    say(user(store, embedder, acme, "carol"), "I'm allergic to kiwi")
    synced(store, index)
    carol = sql_ids(store, acme, "carol")
    assert carol and index.ids(acme, "carol") == carol
    query = embedder.embed_queries(["kiwi allergy"])[0]
    assert {hit.memory_id for hit in index.search(acme, "carol", query, k=5)} == carol


ARCHIVE = [
    "I learned to sail on Lake Geneva with my uncle",
    "My first car was a red Fiat Panda",
    "I broke my arm skiing in Zermatt",
    "We adopted a cat called Miso from the shelter",
    "I ran my first marathon in Berlin",
    "I studied cello for six years as a child",
    "My grandmother taught me to make pierogi",
    "I worked one summer on a fishing boat in Alaska",
]


def test_an_archive_beyond_the_hosts_budget_is_recalled_through_the_milvus_server(
    store, index, embedder
) -> None:
    tenant = f"t_{uuid.uuid4().hex[:10]}"
    store.tenants.create(tenant, "Acme")
    now = datetime.now(UTC)
    items = []
    for n, (content, vector) in enumerate(zip(ARCHIVE, embedder.embed_passages(ARCHIVE), strict=True)):
        at = now - timedelta(days=30 + n)  # the first ones archived most recently
        items.append(
            MemoryItem(
                tenant_id=tenant,
                user_id="dana",
                content=content,
                kind=Kind.EVENT,
                layer=Layer.ARCHIVE,
                state=State.ARCHIVED,
                embedding=vector.tobytes(),
                created_at=at - timedelta(days=200),
                updated_at=at,
                last_accessed_at=at,
                archived_at=at,
            )
        )
    store.memories.commit(
        GateChanges(upserted={i.memory_id: i for i in items}), tenant_id=tenant, user_id="dana"
    )
    synced(store, index)  # this process wrote them: a "Session" search sees them without waiting a tick

    policy = GatePolicy(archive_memory_items=2)
    dana = UserMemoryService(
        tenant, "dana", store=store, embedder=embedder, policy=policy, vector_index=lambda: index
    )
    alone = UserMemoryService(tenant, "dana", store=store, embedder=embedder, policy=policy)
    for n in (4, 6, 7):  # beyond the two the host keeps in memory
        question = {4: "Which marathon did I run?", 6: "Who taught me to cook pierogi?"}.get(
            n, "Did I ever work on a boat?"
        )
        hits = dana.recalls.recall(api.RecallRequest(query=question, k=3)).hits
        assert hits and hits[0].memory.memory_id == items[n].memory_id and "archive" in hits[0].routes
        without_index = alone.recalls.recall(api.RecallRequest(query=question, k=3)).hits
        assert items[n].memory_id not in {h.memory.memory_id for h in without_index}
    assert len(dana.recall_state.archive_view().items) == 2
