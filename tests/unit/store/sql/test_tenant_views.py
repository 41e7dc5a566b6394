"""``TenantViews`` on SQLite: per-user tier counts (what counts against capacity and what does not),
the user search (``_`` matches itself, case-insensitive, paged), each inside one tenant. Resolving an alert is
a user command (tests/unit/app/test_commands.py)."""

import pytest

from actors.core.memory import Alert, GateChanges, MemoryItem
from actors.store.sql.store import MemoryStore
from schemas.enums import AlertKind, Kind, Layer, State

A, B = "acme", "beta"


@pytest.fixture
def store(tmp_path):
    store = MemoryStore(f"sqlite:///{tmp_path / 'h.db'}")
    store.create_schema()
    store.tenants.create(A)
    store.tenants.create(B)
    yield store
    store.dispose()


def put(store, tenant_id, user_id, layer=Layer.WORKING, state=State.PENDING, n=1, alerts=()):
    items = [
        MemoryItem(tenant_id, user_id, f"{user_id} note {k}", Kind.FACT, layer=layer, state=state)
        for k in range(n)
    ]
    store.memories.commit(GateChanges(upserted={i.memory_id: i for i in items}, alerts=list(alerts)))
    return items


def test_counts_separate_active_tiers_from_archive_and_history(store):
    put(store, A, "alice", n=3)
    put(store, A, "alice", Layer.LONGTERM, State.CONFIRMED, n=2)
    core = put(store, A, "alice", Layer.CORE, State.FROZEN, n=2)
    put(store, A, "alice", Layer.CORE, State.SUPERSEDED)  # history: no capacity used
    put(store, A, "alice", Layer.ARCHIVE, State.ARCHIVED, n=4)
    put(store, A, "alice", alerts=[Alert(A, "alice", AlertKind.CORE_FULL, core[0].memory_id, "full")])
    put(store, B, "alice", n=9)  # the same user id in another tenant

    counts = store.views.counts_of(A, "alice")
    assert counts.active == {Layer.WORKING: 4, Layer.LONGTERM: 2, Layer.CORE: 2}
    assert (counts.archived, counts.frozen, counts.open_alerts) == (4, 2, 1)
    assert counts.last_write_at is not None
    assert store.views.counts_of(B, "alice").active == {Layer.WORKING: 9}
    nobody = store.views.counts_of(A, "nobody")
    assert (nobody.active, nobody.archived, nobody.last_write_at) == ({}, 0, None)


def test_search_is_literal_case_insensitive_paged_and_scoped(store):
    for user in ("a_b", "axb", "Alice"):
        put(store, A, user)
    put(store, B, "alina")

    def ids(tenant_id, **kwargs):
        found, truncated = store.views.user_counts(tenant_id, **kwargs)
        return [c.user_id for c in found], truncated

    assert ids(A) == (["Alice", "a_b", "axb"], False)
    assert ids(A, query="a_b") == (["a_b"], False)
    assert ids(A, query="ALI") == (["Alice"], False)
    assert ids(A, limit=2) == (["Alice", "a_b"], True)
    assert ids(B) == (["alina"], False)
