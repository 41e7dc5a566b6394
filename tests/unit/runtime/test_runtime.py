"""The host runtime's plain parts: rendezvous routing, fencing epochs and the outbox in SQL (the batching
embedder: test_batching.py)."""

from collections import Counter

import numpy as np
import pytest

from actors.core.memory import GateChanges, MemoryItem
from actors.runtime.outbox import drain
from actors.runtime.rendezvous import host_of
from actors.store.vectors.memory_index import InMemoryIndex
from schemas.enums import Kind
from schemas.errors import OwnershipLost

USERS = [f"user{n}" for n in range(3000)]


def test_rendezvous_spreads_users_evenly_and_moves_few_on_growth():
    before = [host_of("acme", u, 4) for u in USERS]
    assert min(Counter(before).values()) > len(USERS) / 4 * 0.85
    after = [host_of("acme", u, 5) for u in USERS]
    moved = [(b, a) for b, a in zip(before, after, strict=True) if a != b]
    assert all(a == 4 for _, a in moved)  # only to the new host
    assert abs(len(moved) / len(USERS) - 1 / 5) < 0.03
    assert all(host_of("acme", u, 1) == 0 for u in USERS[:50])


def item(user: str = "alice", content: str = "I love green tea", dim: int = 8) -> MemoryItem:
    found = MemoryItem(tenant_id="acme", user_id=user, content=content, kind=Kind.PREFERENCE)
    vector = np.full(dim, 1 / np.sqrt(dim), dtype=np.float32)
    found.embedding = vector.tobytes()
    return found


def test_a_newer_claim_fences_every_older_claimant(store):
    first = store.fencing.claim("acme", "alice", "host-0")
    second = store.fencing.claim("acme", "alice", "host-1")
    assert second.epoch == first.epoch + 1 and store.fencing.epoch("acme", "alice") == second.epoch
    stale = item()
    with pytest.raises(OwnershipLost):
        store.memories.commit(GateChanges(upserted={stale.memory_id: stale}), fence=first)
    assert store.memories.count("acme", "alice") == 0  # refused means nothing of it was written
    with pytest.raises(OwnershipLost):
        store.erasure.erase_user("acme", "alice", reason="stale", fence=first)
    store.memories.commit(GateChanges(upserted={stale.memory_id: stale}), fence=second)
    with pytest.raises(OwnershipLost):
        store.erasure.forget_item("acme", "alice", stale.memory_id, reason="x", actor="user", fence=first)
    assert store.memories.count("acme", "alice") == 1
    assert store.fencing.claim("acme", "bob", "host-0").epoch == 1  # epochs are per user


def test_the_outbox_brings_the_index_to_what_sql_holds(store):
    index = InMemoryIndex(8)
    kept, forgotten = item(content="kept"), item(content="forgotten")
    store.memories.commit(GateChanges(upserted={i.memory_id: i for i in (kept, forgotten)}))
    store.erasure.forget_item("acme", "alice", forgotten.memory_id, reason="x", actor="user")
    assert drain(store, index, 8) == 3
    assert index.ids("acme", "alice") == {kept.memory_id}
    # an erasure followed by new writes: the new items survive the erasure's entry in the same batch
    store.erasure.erase_user("acme", "alice", reason="asked")
    again = item(content="after the erasure")
    store.memories.commit(GateChanges(upserted={again.memory_id: again}))
    assert drain(store, index, 8) == 2
    assert index.ids("acme", "alice") == {again.memory_id}
    assert drain(store, index, 8) == 0


def test_only_the_owning_hosts_entries_are_drained(store):
    index = InMemoryIndex(8)
    mine, theirs = item("alice"), item("bob")
    for one in (mine, theirs):
        store.memories.commit(GateChanges(upserted={one.memory_id: one}))
    assert drain(store, index, 8, owns=lambda tenant, user: user == "alice") == 1
    assert index.ids("acme") == {mine.memory_id}
    assert drain(store, index, 8) == 1 and index.ids("acme") == {mine.memory_id, theirs.memory_id}
