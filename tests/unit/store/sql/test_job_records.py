"""The jobs' bookkeeping in SQL (leases, profile digests, cohort features, run records) and the service's
maintenance operations over real SQLite, the in-memory index and the hashing embedder."""

import time
from datetime import timedelta

from actors.adapters.embedding import HashEmbedder
from actors.app.service import UserMemoryService
from actors.core.memory import GateChanges, MemoryItem, utcnow
from actors.runtime.outbox import drain
from actors.store.sql.jobs import CohortFeature
from actors.store.vectors.memory_index import InMemoryIndex
from schemas import api
from schemas.enums import Kind, Layer, Polarity, State
from schemas.settings import GatePolicy


def test_a_lease_excludes_other_holders_until_released_or_expired(store):
    assert store.jobs.acquire_lease("acme", "alice", "job-1", seconds=30)
    assert store.jobs.acquire_lease("acme", "alice", "job-1", seconds=30)  # renewing one's own lease
    assert not store.jobs.acquire_lease("acme", "alice", "job-2", seconds=30)
    store.jobs.release_lease("acme", "alice", "job-2")  # not the holder: nothing happens
    assert not store.jobs.acquire_lease("acme", "alice", "job-2", seconds=30)
    store.jobs.release_lease("acme", "alice", "job-1")
    assert store.jobs.acquire_lease("acme", "alice", "job-2", seconds=0.2)
    time.sleep(0.3)
    assert store.jobs.acquire_lease("acme", "alice", "job-3", seconds=30)  # an expired lease is taken over


def test_profile_digests_are_written_only_when_they_change_and_erased_with_the_user(store):
    assert store.jobs.save_profile_digests("acme", {"alice": {"basic.pet": "ab12"}, "bob": {}}, "run-1") == 2
    assert store.jobs.save_profile_digests("acme", {"alice": {"basic.pet": "ab12"}}, "run-2") == 0
    assert store.jobs.save_profile_digests("acme", {"alice": {"basic.pet": "cd34"}}, "run-3") == 1
    stored = store.jobs.profile_digests("acme", ["alice", "bob", "carol"])
    assert stored == {"alice": {"basic.pet": "cd34"}, "bob": {}}
    store.erasure.erase_user("acme", "alice", reason="user request")
    assert store.jobs.profile_digests("acme", ["alice"]) == {}


def test_cohort_features_are_replaced_as_a_whole(store):
    jazz = CohortFeature("preference.music", Polarity.POSITIVE, "jazz", 6, 10, 0.6)
    tea = CohortFeature("preference.drink", Polarity.POSITIVE, "tea", 5, 10, 0.5)
    store.jobs.replace_cohort_features("acme", [tea, jazz])
    assert store.jobs.cohort_features("acme") == [jazz, tea]
    store.jobs.replace_cohort_features("acme", [tea])
    assert store.jobs.cohort_features("acme") == [tea]


def test_run_records_keep_status_and_report(store):
    run_id = store.jobs.start_run("consolidate", {"tenants": ["acme"]})
    assert store.jobs.runs("consolidate")[0]["status"] == "running"
    store.jobs.finish_run(run_id, "succeeded", {"users": 3})
    (run,) = store.jobs.runs("consolidate")
    assert (run["run_id"], run["status"], run["report"]) == (run_id, "succeeded", {"users": 3})
    assert run["finished_at"] >= run["started_at"]


def _service(store, index):  # the index is reached only through the outbox (drain)
    return UserMemoryService("acme", "alice", store=store, embedder=HashEmbedder(64),
                             policy=GatePolicy())


def _old_pending(text: str, days: int) -> MemoryItem:
    then = utcnow() - timedelta(days=days)
    return MemoryItem(tenant_id="acme", user_id="alice", content=text, kind=Kind.EVENT, write_score=0.3,
                      created_at=then, updated_at=then, last_accessed_at=then)


def test_service_consolidation_commits_archives_and_syncs_only_moved_index_rows(store):
    index = InMemoryIndex(64)
    stale = _old_pending("saw a red car", days=40)
    store.memories.commit(GateChanges(upserted={stale.memory_id: stale}))
    svc = _service(store, index)
    turn = api.TurnIn(text="I love jazz", dialog_id="d1")
    svc.writes.write_turns(api.WriteTurnsRequest(session_id="s1", turns=[turn]))
    counts = svc.maintenance.consolidate()
    assert counts["cleared"] == 1
    drain(store, index, 64)
    assert store.memories.get("acme", "alice", stale.memory_id).state is State.ARCHIVED
    assert index.search("acme", "alice", HashEmbedder(64).embed_passages(["saw a red car"])[0], 1,
                        layers=frozenset({Layer.ARCHIVE}))[0].memory_id == stale.memory_id
    assert [e.action for e in store.audit.events("acme", "alice", stale.memory_id)] == ["archive"]
    assert not any(svc.maintenance.consolidate().values())


def test_service_restores_archived_items_by_id_and_skips_strangers(store):
    index = InMemoryIndex(64)
    stale = _old_pending("saw a red car", days=40)
    store.memories.commit(GateChanges(upserted={stale.memory_id: stale}))
    svc = _service(store, index)
    svc.maintenance.consolidate()
    result = svc.maintenance.restore_archived([stale.memory_id, "m_" + "0" * 32], reason="relevant again")
    assert result == {"restored": [stale.memory_id], "skipped": ["m_" + "0" * 32]}
    restored = store.memories.get("acme", "alice", stale.memory_id)
    drain(store, index, 64)
    assert restored.layer is Layer.LONGTERM and restored.state is State.PENDING
    assert stale.memory_id in {h.memory_id for h in index.search(
        "acme", "alice", HashEmbedder(64).embed_passages(["saw a red car"])[0], 3,
        layers=frozenset({Layer.LONGTERM}))}
