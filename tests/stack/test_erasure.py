"""Forgetting (docs/trust.md#4-erasure), verified by searching every store afterwards rather than trusting the
API: every SQL table and column, the raw bytes of the SQLite file and its write-ahead log, the Milvus
partition (by id and by vector), the archive, the session snapshots (the rendered cache), the audit payloads
and the live host's view (list, recall, a new snapshot). Only tombstones remain, and other users are
untouched.
"""

import uuid

import numpy as np
import pytest

from schemas.settings import Capacities, GatePolicy
from tests.stack.trust_stack import E5_DIM, converge, file_traces, sql_traces

pytestmark = [pytest.mark.stack, pytest.mark.slow]

#: small tiers, so a dozen writes overflow into the archive
TINY = GatePolicy(capacities=Capacities(working=4, longterm=4, core=4))


@pytest.fixture
def tiny_tenant(sql_store):
    tenant_id = f"t_{uuid.uuid4().hex[:12]}"
    return tenant_id, sql_store.tenants.create(tenant_id, policy=TINY)


@pytest.fixture
def milvus(stack_settings):
    from actors.store.vectors.milvus import MilvusIndex

    index = MilvusIndex(stack_settings.milvus_uri, stack_settings.milvus_collection, E5_DIM)
    yield index
    index.close()


def markers(n: int) -> list[str]:
    """Words found nowhere else, so a trace of them anywhere is a trace of this test's content."""
    return [f"Zq{uuid.uuid4().hex[:10]}" for _ in range(n)]


TEMPLATES = (
    "my sailing boat is named {}",
    "I grew up on a street called {}",
    "my grandmother's cat answers to {}",
    "the password hint I never use is the word {}",
    "our wifi network is called {}",
    "my favourite obscure band is {}",
    "the village where I was born is {}",
    "I named my sourdough starter {}",
    "my first car was nicknamed {}",
    "the fictional language I invented is {}",
    "my childhood imaginary friend was {}",
    "the chess opening I made up is called {}",
)


def remember(http, key, user, words, session="s1"):
    turns = [
        {"text": "Remember this: " + template.format(word), "dialog_id": f"{session}-d{n}"}
        for n, (template, word) in enumerate(zip(TEMPLATES, words, strict=False))
    ]
    response = http.post(
        f"/v1/users/{user}/turns", json={"session_id": session, "turns": turns}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()


def db_files(stack_settings):
    db = stack_settings.home / "hermes.db"
    return [db, db.with_name("hermes.db-wal")]


def listed(http, key, user):
    response = http.get(f"/v1/users/{user}/memories", params={"limit": 500}, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def snapshot(http, key, user, session):
    response = http.post(
        f"/v1/users/{user}/sessions", json={"session_id": session}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.json()["text"]


def recall_text(http, key, user, query):
    response = http.post(
        f"/v1/users/{user}/recall", json={"query": query, "k": 50}, headers={"X-API-Key": key}
    )
    assert response.status_code == 200, response.text
    return response.text


def test_forgetting_one_item_leaves_only_its_tombstone(http, tiny_tenant, sql_store, stack_settings, milvus):
    tenant_id, key = tiny_tenant
    words = markers(12)
    remember(http, key, "alice", words)
    assert sql_store.memories.archived(tenant_id, "alice"), "the tiny tiers should have archived something"
    assert any(word in snapshot(http, key, "alice", "s2") for word in words)
    doomed = next(i for i in listed(http, key, "alice") if words[-1] in i["content"])
    memory_id = doomed["memory_id"]
    vector = np.frombuffer(sql_store.memories.get(tenant_id, "alice", memory_id).embedding, dtype=np.float32)

    forgotten = http.delete(f"/v1/users/alice/memories/{memory_id}", headers={"X-API-Key": key})
    assert forgotten.status_code == 200 and forgotten.json()["forgotten"] is True
    converge(stack_settings)  # the index follows SQL through the outbox, within a second on its own

    gone = [words[-1], memory_id]
    assert sql_traces(sql_store.url, [words[-1]]) == []
    assert file_traces(db_files(stack_settings), [words[-1]]) == []
    assert memory_id not in milvus.ids(tenant_id)
    assert memory_id not in {h.memory_id for h in milvus.search(tenant_id, "alice", vector, 50)}
    assert http.get(f"/v1/users/alice/memories/{memory_id}", headers={"X-API-Key": key}).status_code == 404
    assert not any(memory_id == i["memory_id"] for i in listed(http, key, "alice"))
    assert not any(g in recall_text(http, key, "alice", "the chess opening I made up") for g in gone)
    assert words[-1] not in snapshot(http, key, "alice", "s2")  # the snapshot cache was dropped
    trail = sql_store.audit.events(tenant_id, "alice", memory_id)
    assert trail and all(e.before in (None, {"redacted": True}) for e in trail)
    assert all(e.after in (None, {"redacted": True}) for e in trail)
    # the id alone may stay where it names no content: the tombstone, the redacted audit events, and the
    # idempotency record of the write (outcome ids and actions, so a resent write is not re-applied)
    where = {t.split(":")[0] for t in sql_traces(sql_store.url, [memory_id])}
    assert "tombstones" in where and where <= {"tombstones", "audit_events", "applied_requests"}
    kept = [w for w in words[:-1] if any(w in i["content"] for i in listed(http, key, "alice"))]
    assert kept, "forgetting one item must leave the others"


def test_erasing_a_user_removes_them_from_every_store(http, tiny_tenant, sql_store, stack_settings, milvus):
    tenant_id, key = tiny_tenant
    alice_words, bob_words = markers(12), markers(3)
    remember(http, key, "alice", alice_words)
    remember(http, key, "bob", bob_words)
    snapshot(http, key, "alice", "s2")
    http.post("/v1/users/alice/recall", json={"query": "boat"}, headers={"X-API-Key": key})
    archived = sql_store.memories.archived(tenant_id, "alice")
    converge(stack_settings)
    assert archived and milvus.ids(tenant_id, "alice")
    bob_before = listed(http, key, "bob")

    erased = http.delete("/v1/users/alice", headers={"X-API-Key": key})
    assert erased.status_code == 200 and erased.json()["items_removed"] >= len(archived)
    converge(stack_settings)

    assert sql_traces(sql_store.url, alice_words) == []
    assert file_traces(db_files(stack_settings), alice_words) == []
    # what stays names no content: the tombstone, and the fencing epoch (which must outlive the user, or a
    # stale host could commit under an epoch a new claim hands out again)
    scoped = [
        t
        for t in sql_traces(sql_store.url, [f"'{tenant_id}', 'alice'"])
        if not t.startswith(("tombstones", "user_owners"))
    ]
    assert scoped == []
    assert milvus.ids(tenant_id, "alice") == set()
    assert milvus.search(tenant_id, "alice", np.ones(E5_DIM, np.float32) / np.sqrt(E5_DIM), 50) == []
    assert sql_store.memories.archived(tenant_id, "alice") == []
    assert listed(http, key, "alice") == []
    assert not any(w in recall_text(http, key, "alice", "boat street cat band village") for w in alice_words)
    assert not any(w in snapshot(http, key, "alice", "s2") for w in alice_words)
    assert listed(http, key, "bob") == bob_before  # the neighbour is untouched
    assert len(milvus.ids(tenant_id, "bob")) == len(bob_before)


def test_forgetting_an_item_cuts_its_words_out_of_the_context_of_the_turns_after_it(
    http, tiny_tenant, sql_store, stack_settings
):
    """The turns said before a memory are kept beside it as its context (docs/locomo.md): the next two
    memories of the session quote a forgotten one's turn, and lose it."""
    tenant_id, key = tiny_tenant
    words = markers(12)
    remember(http, key, "alice", words)
    doomed, after = (next(i for i in listed(http, key, "alice") if words[n] in i["content"]) for n in (5, 6))
    assert words[5] in (sql_store.memories.get(tenant_id, "alice", after["memory_id"]).context or "")

    forgotten = http.delete(f"/v1/users/alice/memories/{doomed['memory_id']}", headers={"X-API-Key": key})
    assert forgotten.status_code == 200 and forgotten.json()["forgotten"] is True
    converge(stack_settings)

    assert sql_traces(sql_store.url, [words[5]]) == []
    assert file_traces(db_files(stack_settings), [words[5]]) == []
    assert words[5] not in recall_text(http, key, "alice", "the village where I was born")
    assert any(words[6] in i["content"] for i in listed(http, key, "alice"))  # the one after it stays
