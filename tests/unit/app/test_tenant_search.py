"""The operator's search over one tenant (real SQLite, the in-memory index fed by the outbox, the hashing
embedder): every user's memories of that tenant and no other's, those that mention the text first, only what
SQL still holds; and its HTTP door refuses malformed searches with a 422."""

import pytest
from fastapi.testclient import TestClient

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.app.tenant_search import TenantSearch
from actors.app.tenant_view import TenantView
from actors.runtime.outbox import drain
from actors.store.sql.store import MemoryStore
from actors.store.vectors.memory_index import InMemoryIndex
from schemas import api
from schemas.enums import Kind, State
from schemas.settings import GatePolicy
from serve.app import create_fastapi_app
from serve.routes import tenant_search
from serve.routes.deps import current_gateway, tenant_from_api_key

DIM = 128


@pytest.fixture
def views(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    for tenant in ("acme", "globex"):
        store.tenants.create(tenant)
    yield store
    store.dispose()


def remember(store, tenant: str, user: str, *texts: str) -> None:
    svc = UserMemoryService(tenant, user, store=store, embedder=HashEmbedder(DIM), policy=GatePolicy())
    for text in texts:
        request = api.WriteMemoryRequest(
            content=text, kind=Kind.FACT, session_id="s1", dialog_ids=["d1"], remember=True
        )
        svc.writes.write_memory(request)


def search_of(index) -> TenantSearch:
    return TenantSearch(lambda: index, lambda: HashEmbedder(DIM))


def test_the_search_spans_the_tenants_users_and_never_another_tenant(views):
    index = InMemoryIndex(DIM)
    remember(views, "acme", "alice", "Rosalind Franklin is my aunt", "I keep bees on the roof")
    remember(views, "acme", "bob", "I had lunch with Rosalind Franklin", "I like sailing")
    remember(views, "globex", "carol", "Rosalind Franklin lives next door")
    drain(views, index, DIM)
    found = search_of(index).search(TenantView(views, "acme"), "Rosalind Franklin", k=10)
    mentioning = [(m.item.user_id, m.mentions) for m in found if m.mentions]
    assert sorted(mentioning) == [("alice", True), ("bob", True)]
    assert found[0].mentions and found[1].mentions and not any(m.mentions for m in found[2:])
    assert {m.item.tenant_id for m in found} == {"acme"}
    assert all(m.item.user_id != "carol" for m in found)


def test_what_sql_no_longer_holds_or_holds_in_another_state_is_not_shown(views):
    index = InMemoryIndex(DIM)
    remember(views, "acme", "alice", "Rosalind Franklin is my aunt")
    remember(views, "acme", "bob", "I had lunch with Rosalind Franklin")
    drain(views, index, DIM)
    views.erasure.erase_user("acme", "bob", reason="erasure request")  # the index still holds bob's row
    search, acme = search_of(index), TenantView(views, "acme")
    assert [m.item.user_id for m in search.search(acme, "Rosalind Franklin", k=5)] == ["alice"]
    assert search.search(acme, "Rosalind Franklin", k=5, states=[State.ARCHIVED]) == []


@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "x" * 501},
        {"query": "bees", "k": 0},
        {"query": "bees", "k": 201},
        {"query": "bees", "states": ["gone"]},
        {"query": "bees", "filter": 'user_id != ""'},
    ],
)
def test_a_malformed_search_is_refused_with_a_422(views, body):
    app = create_fastapi_app()
    app.dependency_overrides[tenant_from_api_key] = lambda: "acme"
    app.dependency_overrides[current_gateway] = lambda: None
    app.dependency_overrides[tenant_search.current_search] = lambda: search_of(InMemoryIndex(DIM))
    with TestClient(app) as client:
        response = client.post("/v1/memories/search", json=body)
    assert response.status_code == 422, response.text
